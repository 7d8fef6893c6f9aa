/** The API token of this browser and what it may do. */
import { useEffect, useState } from 'react';
import { getToken, setToken } from '../../api/client.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';
import { useAccess } from './api.ts';

export function TokenSettings() {
  const [version, setVersion] = useState(0);
  const [value, setValue] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => setSaved(getToken()), [version]);
  const access = useAccess(version);
  return (
    <Panel title="API token">
      {access.data === undefined ? (
        access.error ? (
          <ErrorState error={access.error} what="token scopes" />
        ) : (
          <Loading label="Checking access…" height={60} />
        )
      ) : access.data.open ? (
        <p data-testid="access">
          <b>This server runs open</b>: it is bound to loopback and no tokens are configured (
          <code>ONSET_TOKENS</code> is empty), so every request has every scope. Bind it to another
          address and it refuses to start until tokens are set.
        </p>
      ) : (
        <div data-testid="access">
          <p>
            Tokens are configured on the server (<code>ONSET_TOKENS="read:…,admin:…"</code>).{' '}
            {saved ? 'The token saved in this browser' : 'Without a token, this browser'} can:
          </p>
          <ul className="scope-list">
            <li className={access.data.read ? 'ok-text' : 'warn'}>
              {access.data.read ? '✓' : '✗'} read: dashboards, series, regressions, SLOs, deploys
            </li>
            <li className={access.data.admin ? 'ok-text' : 'warn'}>
              {access.data.admin ? '✓' : '✗'} admin: SLOs, webhooks, silences, acknowledging
            </li>
            <li className="muted">
              ingest (OTLP) and deploys (CI markers) are for agents and CI, not for this browser
            </li>
          </ul>
          {access.data.reason ? (
            <p className="muted small">Server said: {access.data.reason}</p>
          ) : null}
        </div>
      )}
      <form
        className="row gap wrap"
        onSubmit={(e) => {
          e.preventDefault();
          setToken(value.trim() || null);
          setValue('');
          setVersion((v) => v + 1);
        }}
      >
        <label className="field">
          <span>{saved ? `Saved token …${saved.slice(-4)}; replace with` : 'Bearer token'}</span>
          <input
            type="password"
            autoComplete="off"
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        </label>
        <button type="submit" className="btn primary">
          Save token
        </button>
        {saved ? (
          <button
            type="button"
            className="btn"
            onClick={() => {
              setToken(null);
              setVersion((v) => v + 1);
            }}
          >
            Forget token
          </button>
        ) : null}
      </form>
    </Panel>
  );
}
