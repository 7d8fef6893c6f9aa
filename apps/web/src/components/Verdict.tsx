/**
 * A deploy's verdict as the server decided it (api.md "Deploy verdicts"): a
 * badge for lists, and the full table of judged series with their numbers.
 * Nothing here judges; it draws the server's answer.
 */
import type { Verdict, VerdictOutcome, VerdictRatio, VerdictSide } from '@onset/contract';
import { useVerdict } from '../features/deploys/api.ts';
import { formatLatencyMs } from '../lib/format.ts';
import { formatInstant } from '../state/timeRange.ts';

const LABEL: Record<VerdictOutcome, string> = {
  pending: 'pending',
  pass: 'pass',
  fail: 'fail',
  inconclusive: 'inconclusive',
};

export function VerdictTag({ outcome, title }: { outcome: VerdictOutcome; title?: string }) {
  return (
    <span className={`verdict-tag verdict-${outcome}`} data-verdict={outcome} title={title}>
      {LABEL[outcome]}
    </span>
  );
}

/** The verdict of one deploy, fetched on its own (a list row, a suspect). */
export function VerdictBadge({ deployId }: { deployId: string }) {
  const q = useVerdict(deployId);
  if (q.isPending) return <span className="muted small">…</span>;
  if (q.isError || !q.data) return <span className="muted small">–</span>;
  return <VerdictTag outcome={q.data.verdict} title={q.data.reason} />;
}

const ms = (v: number | null) => (v === null ? '–' : formatLatencyMs(v));
const ratio = (r: VerdictRatio) =>
  r.value === null
    ? '–'
    : `×${r.value.toFixed(2)}${r.low !== null && r.high !== null ? ` [${r.low.toFixed(2)}, ${r.high.toFixed(2)}]` : ''}`;
const pValue = (p: number | null) =>
  p === null ? '–' : p < 1e-4 ? p.toExponential(0) : p.toPrecision(2);

function Side({ side }: { side: VerdictSide }) {
  return (
    <>
      <td className="num">{ms(side.p50)}</td>
      <td className="num">{ms(side.p99)}</td>
      <td className="num">{side.count.toLocaleString('en-US')}</td>
    </>
  );
}

function windowText(w: { from: string; to: string }): string {
  return `${formatInstant(Date.parse(w.from), true)} – ${formatInstant(Date.parse(w.to), true)}`;
}

/** The whole verdict: headline, how it was judged, and one row per judged series. */
export function VerdictDetail({ verdict: v }: { verdict: Verdict }) {
  return (
    <div className="verdict-detail" data-testid="verdict-detail" data-verdict={v.verdict}>
      <p className="verdict-headline">
        <VerdictTag outcome={v.verdict} /> <span>{v.reason}</span>
      </p>
      <dl className="verdict-facts small">
        <dt>Method</dt>
        <dd>
          {v.method === 'canary' ? 'canary hosts against the other hosts' : 'after against before'}
          {v.method_reason ? <span className="muted"> · {v.method_reason}</span> : null}
        </dd>
        <dt>Baseline</dt>
        <dd>{windowText(v.windows.baseline)}</dd>
        <dt>Candidate</dt>
        <dd>{windowText(v.windows.candidate)}</dd>
        {v.windows.drift_guard ? (
          <>
            <dt>Drift guard</dt>
            <dd>{windowText(v.windows.drift_guard)}</dd>
          </>
        ) : null}
        <dt>Fails at</dt>
        <dd>
          p50 ×{v.thresholds.p50_ratio} or p99 ×{v.thresholds.p99_ratio}, at least{' '}
          {v.thresholds.min_count} calls a side, α {v.thresholds.alpha}
        </dd>
        <dt>Decided</dt>
        <dd>
          {v.decided_at ? formatInstant(Date.parse(v.decided_at), true) : 'not yet (pending)'}
        </dd>
      </dl>
      {v.regressions.length ? (
        <ul className="plain-list small">
          {v.regressions.map((r) => (
            <li key={r.id}>
              regression {r.id}: {r.reason}
            </li>
          ))}
        </ul>
      ) : null}
      {v.series.length ? (
        <div className="table-scroll">
          <table className="table verdict-table">
            <thead>
              <tr>
                <th scope="col" rowSpan={2}>
                  Verdict
                </th>
                <th scope="col" rowSpan={2}>
                  Series
                </th>
                <th scope="colgroup" colSpan={3}>
                  Baseline
                </th>
                <th scope="colgroup" colSpan={3}>
                  Candidate
                </th>
                <th scope="col" rowSpan={2}>
                  p50 ratio
                </th>
                <th scope="col" rowSpan={2}>
                  p99 ratio
                </th>
                <th scope="col" rowSpan={2}>
                  p
                </th>
                <th scope="col" rowSpan={2}>
                  Reason
                </th>
              </tr>
              <tr>
                <th scope="col">p50</th>
                <th scope="col">p99</th>
                <th scope="col">calls</th>
                <th scope="col">p50</th>
                <th scope="col">p99</th>
                <th scope="col">calls</th>
              </tr>
            </thead>
            <tbody>
              {v.series.map((s) => (
                <tr key={`${s.series_id}-${s.role}`} data-series-id={s.series_id}>
                  <td>
                    <VerdictTag outcome={s.verdict} />
                  </td>
                  <td>
                    <div>
                      {s.peer ? `${s.service} → ${s.peer}` : s.service} · {s.name}
                    </div>
                    <div className="muted small">
                      {s.op} · {s.view} · {s.role}
                    </div>
                  </td>
                  <Side side={s.baseline} />
                  <Side side={s.candidate} />
                  <td className="num">{ratio(s.p50_ratio)}</td>
                  <td className="num">{ratio(s.p99_ratio)}</td>
                  <td className="num">{pValue(s.p_value)}</td>
                  <td className="small">{s.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">No series judged.</p>
      )}
      {v.series_total > v.series.length ? (
        <p className="muted small">
          … and {v.series_total - v.series.length} more series (failing rows come first).
        </p>
      ) : null}
    </div>
  );
}

/** The verdict of a deploy, fetched and drawn in full (the deploys page's selected marker). */
export function DeployVerdict({ deployId }: { deployId: string }) {
  const q = useVerdict(deployId);
  if (q.isPending) return <p className="muted">Loading the verdict…</p>;
  if (q.isError || !q.data)
    return (
      <p className="muted">
        No verdict: {q.error instanceof Error ? q.error.message : 'the server did not answer'}
      </p>
    );
  return <VerdictDetail verdict={q.data} />;
}
