/** SLOs: all of them sorted by error budget left; create one from a series. */
import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { useCreateSlo, useSloSuggestion, useSlos } from './api.ts';
import { useSeriesOne, useSeriesPage } from '../explorer/api.ts';

/** Series the create form's picker lists at once (the server counts the rest). */
const PICKER_LIMIT = 200;
import type { Series } from '@onset/contract';
import { ApiError } from '../../api/client.ts';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';
import { Empty, QueryView } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';
import { SloNameCell, SloStatusCells, sortSlosByBudget } from '../../components/SloParts.tsx';
import { edgeLabel, formatLatencyMs, formatPercent } from '../../lib/format.ts';
import { formatInstant } from '../../lib/time.ts';

/**
 * `?create=new` opens the form before a series is chosen (an empty value would
 * drop the parameter from the URL, and the button did nothing).
 */
const NO_SERIES_YET = 'new';

/** Burn windows the SLO table shows: one per alert tier's long window. */
const BURN_WINDOWS = ['1h', '6h', '3d'] as const;

export default function SlosPage() {
  const { params, get, set } = useUrlState();
  const slos = useSlos();
  const creating = params.has('create');

  return (
    <div className="page">
      <div className="page-head">
        <h1>SLOs</h1>
        {!creating ? (
          <button
            type="button"
            className="btn primary"
            onClick={() => set({ create: NO_SERIES_YET }, { push: true })}
          >
            New SLO from a series
          </button>
        ) : null}
      </div>
      {creating ? (
        <CreateSlo
          seriesId={get('create') === NO_SERIES_YET ? '' : get('create')}
          onDone={() => set({ create: null }, { push: true })}
        />
      ) : null}
      <QueryView
        query={slos}
        what="SLOs"
        height={200}
        isEmpty={(d) => d.length === 0}
        empty={
          <Empty title="No SLO yet" height={200}>
            An SLO says "{'{'}objective{'}'} of calls finish under {'{'}threshold{'}'} over {'{'}
            window{'}'}", e.g. 99% of unmounts under 100 ms over 28 days. Onset pages when the error
            budget burns fast (14.4× over 1 h). Create one from a series above, or with{' '}
            <code>POST /api/v1/slos</code> (JSON or OpenSLO YAML).
          </Empty>
        }
      >
        {(data) => (
          <Panel title={`${data.length} SLOs, least budget left first`}>
            <table className="table slo-table">
              <thead>
                <tr>
                  <th scope="col">SLO</th>
                  <th scope="col">Objective</th>
                  <th scope="col">SLI</th>
                  <th scope="col">Budget left</th>
                  <th scope="col">Burn 1h</th>
                  <th scope="col">Burn 6h</th>
                  <th scope="col">Burn 3d</th>
                  <th scope="col">Alert</th>
                </tr>
              </thead>
              <tbody>
                {sortSlosByBudget(data).map((s) => (
                  <tr key={s.id} data-slo-id={s.id}>
                    <SloNameCell slo={s} params={params}>
                      {[s.service, s.op, s.view, s.name_match].filter(Boolean).join(' · ')}
                    </SloNameCell>
                    <td>
                      {formatPercent(s.objective, s.objective >= 0.999 ? 2 : 1)} under{' '}
                      {formatLatencyMs(s.threshold_ms)}
                      <div className="muted small">over {s.window}</div>
                    </td>
                    <td>{formatPercent(s.status?.sli ?? null, 3)}</td>
                    <SloStatusCells slo={s} windows={BURN_WINDOWS} showAcknowledged />
                  </tr>
                ))}
              </tbody>
            </table>
          </Panel>
        )}
      </QueryView>
    </div>
  );
}

function CreateSlo({ seriesId, onDone }: { seriesId: string; onDone: () => void }) {
  const { params, set } = useUrlState();
  const navigate = useNavigate();
  // The picker searches on the server: any of any number of series can be found, and it says
  // how many match when it shows fewer.
  const [find, setFind] = useState('');
  const page = useSeriesPage({ q: find.trim() || undefined, limit: PICKER_LIMIT });
  const one = useSeriesOne(seriesId || undefined);
  const [objective, setObjective] = useState(0.99);
  const suggestion = useSloSuggestion(seriesId || undefined, objective);
  const create = useCreateSlo();
  const [name, setName] = useState('');
  const [threshold, setThreshold] = useState('');
  const [window, setWindow] = useState('28d');
  const chosen: Series | undefined =
    page.data?.series.find((s) => s.id === seriesId) ??
    (one.data?.id === seriesId ? one.data : undefined);
  const options = [
    ...(chosen && !page.data?.series.some((s) => s.id === chosen.id) ? [chosen] : []),
    ...(page.data?.series ?? []),
  ];

  // A different series gets its own suggestion, not the previous one's numbers.
  useEffect(() => {
    setName('');
    setThreshold('');
  }, [seriesId]);

  useEffect(() => {
    if (suggestion.data) {
      setName((n) => n || suggestion.data!.slo.name);
      setThreshold((t) => t || String(suggestion.data!.slo.threshold_ms));
    }
  }, [suggestion.data]);

  const submit = async () => {
    const thresholdMs = Number(threshold);
    const created = await create.mutateAsync({
      series_id: seriesId,
      name: name || undefined,
      objective,
      window,
      ...(threshold && Number.isFinite(thresholdMs) && thresholdMs > 0
        ? { threshold_ms: thresholdMs }
        : {}),
    });
    const id =
      (created as { id?: string; slos?: Array<{ id: string }> }).id ??
      (created as { slos?: Array<{ id: string }> }).slos?.[0]?.id;
    if (id) navigate(linkWithGlobals(`/slos/${id}`, params));
    else onDone();
  };

  return (
    <Panel title="New SLO from a series">
      <form
        className="form-grid"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <div className="field">
          <label>
            <span>Search</span>{' '}
            <input
              type="search"
              value={find}
              onChange={(e) => setFind(e.target.value)}
              placeholder="service, op, name or host"
              maxLength={256}
            />
          </label>
          {page.data ? (
            <span className="muted small" data-testid="series-picker-count" aria-live="polite">
              {page.data.total > page.data.series.length
                ? `${page.data.series.length} of ${page.data.total} matching series shown: type more to narrow`
                : `${page.data.total} matching series`}
            </span>
          ) : null}
        </div>
        <label className="field">
          <span>Series</span>
          <select
            value={seriesId}
            onChange={(e) => set({ create: e.target.value || NO_SERIES_YET })}
            required
          >
            <option value="">Choose a series…</option>
            {options.map((s) => (
              <option key={s.id} value={s.id}>
                {edgeLabel(s)} · {s.op} · {s.view} · {s.name}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Name</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder={
              chosen
                ? `${chosen.service} ${chosen.op} ${chosen.name}`
                : 'e.g. checkout lookup latency'
            }
          />
        </label>
        <label className="field">
          <span>Threshold (ms)</span>
          <input
            type="number"
            min="0.001"
            step="any"
            value={threshold}
            onChange={(e) => setThreshold(e.target.value)}
            placeholder="suggested from history"
          />
        </label>
        <label className="field">
          <span>Objective</span>
          <select value={objective} onChange={(e) => setObjective(Number(e.target.value))}>
            {[0.9, 0.95, 0.99, 0.995, 0.999, 0.9999].map((o) => (
              <option key={o} value={o}>
                {formatPercent(o, o >= 0.999 ? 2 : 1)}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Window</span>
          <select value={window} onChange={(e) => setWindow(e.target.value)}>
            {['7d', '14d', '28d', '30d'].map((w) => (
              <option key={w} value={w}>
                {w}
              </option>
            ))}
          </select>
        </label>
        <div className="form-actions">
          <button type="submit" className="btn primary" disabled={!seriesId || create.isPending}>
            {create.isPending ? 'Creating…' : 'Create SLO'}
          </button>
          <button type="button" className="btn" onClick={onDone}>
            Cancel
          </button>
        </div>
      </form>
      {suggestion.data ? (
        <p className="muted small">
          {suggestion.data.basis.before_regression ? (
            <>
              <b>Learnt from the baseline before the open regression</b> (
              <Link
                to={linkWithGlobals(
                  `/regressions/${suggestion.data.basis.before_regression.regression_id}`,
                  params,
                )}
              >
                onset {formatInstant(Date.parse(suggestion.data.basis.before_regression.onset))}
              </Link>
              , {suggestion.data.basis.before_regression.quantile} now{' '}
              {formatLatencyMs(suggestion.data.basis.before_regression.after_ms)}), so the SLO sees
              the regression.{' '}
            </>
          ) : null}
          Suggested from {suggestion.data.basis.events.toLocaleString()} calls between{' '}
          {formatInstant(Date.parse(suggestion.data.basis.from))} and{' '}
          {formatInstant(Date.parse(suggestion.data.basis.to))}: p{objective * 100} was{' '}
          {formatLatencyMs(suggestion.data.basis.quantile_ms)};{' '}
          {formatPercent(suggestion.data.basis.expected_sli, 2)} of them would meet{' '}
          {formatLatencyMs(suggestion.data.slo.threshold_ms)}.
          {suggestion.data.watched_by.length
            ? ` Already watched by: ${suggestion.data.watched_by.map((w) => w.name).join(', ')}.`
            : ''}
        </p>
      ) : suggestion.error &&
        !(suggestion.error instanceof ApiError && suggestion.error.status === 422) ? (
        <p className="muted small">
          No threshold suggestion: {(suggestion.error as Error).message}
        </p>
      ) : null}
      {create.error ? (
        <p className="warn" role="alert">
          Could not create the SLO: {(create.error as Error).message}
        </p>
      ) : null}
    </Panel>
  );
}
