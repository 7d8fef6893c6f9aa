/**
 * Drill-down on the Explorer: what a drag on a chart does (zoom, or select calls to compare),
 * the selection's calls against the rest of the window by attribute (GET
 * /api/v1/series/:id/compare, computed by the server), and the overlay of the same window a
 * day or a week earlier. The selection lives in the URL (sel_from, sel_to, min_ms, max_ms).
 */
import type { SelectionCompare, SelectionLift, Span } from '@onset/contract';
import { useCompare } from './api.ts';
import { Panel } from '../../components/Controls.tsx';
import { ErrorState, Loading } from '../../components/States.tsx';
import { TraceLink } from '../../components/TraceLink.tsx';
import { ShareBar, sharePct } from '../../components/Evidence.tsx';
import { OVERLAYS } from '../../components/graphs/overlayData.ts';
import { formatLatencyMs } from '../../lib/format.ts';
import { formatInstant } from '../../lib/time.ts';

export type DragMode = 'zoom' | 'compare';

export interface ChartSelection {
  selFromMs?: number;
  selToMs?: number;
  minMs?: number;
  maxMs?: number;
}

const num = (text: string | null): number | undefined => {
  if (text === null || text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
};
const instant = (text: string | null): number | undefined => {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
};

/** The selection the URL holds, or null when there is none. */
export function selectionFromParams(params: URLSearchParams): ChartSelection | null {
  const s: ChartSelection = {
    selFromMs: instant(params.get('sel_from')),
    selToMs: instant(params.get('sel_to')),
    minMs: num(params.get('min_ms')),
    maxMs: num(params.get('max_ms')),
  };
  return Object.values(s).some((v) => v !== undefined) ? s : null;
}

/** The URL patch for a selection (null clears it). */
export function selectionPatch(s: ChartSelection | null): Record<string, string | null> {
  const iso = (ms: number | undefined) =>
    ms === undefined ? null : new Date(Math.round(ms / 1000) * 1000).toISOString();
  const ms = (v: number | undefined) => (v === undefined ? null : String(Number(v.toPrecision(4))));
  return {
    sel_from: iso(s?.selFromMs),
    sel_to: iso(s?.selToMs),
    min_ms: ms(s?.minMs),
    max_ms: ms(s?.maxMs),
  };
}

export function DrillControls({
  mode,
  onMode,
  overlay,
  onOverlay,
}: {
  mode: DragMode;
  onMode: (m: DragMode) => void;
  overlay: string;
  onOverlay: (v: string) => void;
}) {
  return (
    <div className="drill-controls">
      <div className="segmented" role="group" aria-label="Drag on a chart to">
        <span className="muted small">Drag on a chart to </span>
        {(
          [
            ['zoom', 'Zoom'],
            ['compare', 'Compare calls'],
          ] as const
        ).map(([v, text]) => (
          <button
            key={v}
            type="button"
            className={`btn ${mode === v ? 'active' : ''}`}
            aria-pressed={mode === v}
            data-testid={`drag-${v}`}
            onClick={() => onMode(v)}
          >
            {text}
          </button>
        ))}
      </div>
      <OverlaySelect value={overlay} onChange={onOverlay} />
    </div>
  );
}

/** "Overlay: the same window a day / a week earlier" (URL `overlay=1d|1w`). */
export function OverlaySelect({
  value,
  onChange,
}: {
  value: string;
  onChange: (v: string) => void;
}) {
  return (
    <label className="field inline-field">
      <span className="small muted">Overlay</span>{' '}
      <select value={value} data-testid="overlay-select" onChange={(e) => onChange(e.target.value)}>
        <option value="">none</option>
        {OVERLAYS.map((o) => (
          <option key={o.value} value={o.value}>
            the same window {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

function describeSelection(c: SelectionCompare['selection']): string {
  const parts = [
    `${formatInstant(Date.parse(c.from), true)} – ${formatInstant(Date.parse(c.to), true)}`,
  ];
  if (c.min_ms !== null && c.max_ms !== null)
    parts.push(`${formatLatencyMs(c.min_ms)} to ${formatLatencyMs(c.max_ms)}`);
  else if (c.min_ms !== null) parts.push(`at least ${formatLatencyMs(c.min_ms)}`);
  else if (c.max_ms !== null) parts.push(`under ${formatLatencyMs(c.max_ms)}`);
  return parts.join(', ');
}

const pct = sharePct;

function LiftTable({ lifts }: { lifts: SelectionLift[] }) {
  if (!lifts.length)
    return (
      <p className="muted" data-testid="no-selection-lifts">
        No attribute value is more common among the selected calls than among the rest.
      </p>
    );
  return (
    <table className="table selection-lifts" data-testid="selection-lifts">
      <thead>
        <tr>
          <th>attribute</th>
          <th>value</th>
          <th>share: selected vs rest</th>
          <th className="num">lift</th>
          <th className="num">calls selected / rest</th>
        </tr>
      </thead>
      <tbody>
        {lifts.map((l) => (
          <tr key={`${l.key}=${l.value}`} data-key={l.key} data-value={l.value}>
            <td className="mono">{l.key}</td>
            <td className="mono">{l.value}</td>
            <td>
              <div>
                <ShareBar share={l.share_selected} tone="selected" bad />{' '}
                <span className="small">{pct(l.share_selected)} selected</span>
              </div>
              <div>
                <ShareBar share={l.share_rest} tone="rest" bad={false} />{' '}
                <span className="small muted">{pct(l.share_rest)} rest</span>
              </div>
            </td>
            <td className="num">+{pct(l.lift)}</td>
            <td className="num" data-testid="lift-counts">
              {l.count_selected} / {l.count_rest}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Exemplars({ spans }: { spans: Span[] }) {
  if (!spans.length) return null;
  return (
    <table className="table exemplars" data-testid="compare-exemplars">
      <thead>
        <tr>
          <th>call</th>
          <th className="num">duration</th>
          <th>host</th>
          <th>start</th>
          <th>trace</th>
        </tr>
      </thead>
      <tbody>
        {spans.map((s) => (
          <tr key={s.span_id}>
            <td>{s.role}</td>
            <td className="num">{formatLatencyMs(s.duration_ms)}</td>
            <td>{s.host}</td>
            <td className="small">{formatInstant(Date.parse(s.start), true)}</td>
            <td className="mono small">
              <TraceLink traceId={s.trace_id} traceUrl={s.trace_url} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The comparison of the URL's selection against the rest of the visible window. */
export function ComparePanel({
  seriesId,
  window,
  selection,
  onClear,
}: {
  seriesId: string;
  window: { fromMs: number; toMs: number };
  selection: ChartSelection;
  onClear: () => void;
}) {
  // The selection is read inside the window the charts show (a refresh moves a relative one).
  const clamp = (ms: number | undefined) =>
    ms === undefined ? undefined : Math.min(Math.max(ms, window.fromMs), window.toMs);
  const compare = useCompare(seriesId, {
    ...window,
    ...selection,
    selFromMs: clamp(selection.selFromMs),
    selToMs: clamp(selection.selToMs),
  });
  const c = compare.data;
  return (
    <Panel
      title="Selected calls compared with the rest of the window"
      actions={
        <button type="button" className="btn" onClick={onClear} data-testid="compare-clear">
          Clear selection
        </button>
      }
    >
      <div data-testid="compare-panel">
        {!c ? (
          compare.error ? (
            <ErrorState
              error={compare.error}
              what="the comparison"
              onRetry={() => compare.refetch()}
            />
          ) : (
            <Loading label="Comparing the selected calls…" />
          )
        ) : (
          <>
            <p
              data-testid="compare-counts"
              data-selected={c.calls.selected}
              data-rest={c.calls.rest}
            >
              <b>{c.calls.selected}</b> calls selected ({describeSelection(c.selection)}) against{' '}
              <b>{c.calls.rest}</b> other calls of the window.
            </p>
            {c.all_calls ? (
              <p
                data-testid="compare-all-calls"
                data-selected={c.all_calls.selected}
                data-rest={c.all_calls.rest}
              >
                Every stored call, by whole minutes: <b>{c.all_calls.selected}</b> in{' '}
                {formatInstant(Date.parse(c.all_calls.from), true)}–
                {formatInstant(Date.parse(c.all_calls.to), true)}
                {c.selection.min_ms !== null || c.selection.max_ms !== null
                  ? ' within the band'
                  : ''}
                , <b>{c.all_calls.rest}</b> in the rest of the window.
              </p>
            ) : null}
            <p className="muted small">
              Attributes are compared on the raw spans kept with them (every span of a quiet series,
              a sample of a busy one&apos;s).
              {Date.parse(c.raw_from) > Date.parse(c.from)
                ? ` Calls before ${formatInstant(Date.parse(c.raw_from), true)} are no longer kept.`
                : ''}
              {c.complete ? '' : ' The window held more calls than are read: the latest are.'}
            </p>
            <LiftTable lifts={c.attributes} />
            <Exemplars spans={c.exemplars} />
          </>
        )}
      </div>
    </Panel>
  );
}
