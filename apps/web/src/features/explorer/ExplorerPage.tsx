/** Explorer: pick a series; log-scale quantiles and a latency heatmap with deploy markers; drag to zoom. */
import { useCallback, useMemo } from 'react';
import { Link } from 'react-router-dom';
import { useQueryClient } from '@tanstack/react-query';
import { useDeploys } from '../deploys/api.ts';
import {
  fetchSeriesOptions,
  useEdge,
  useHeatmap,
  useQuantiles,
  useSeriesCandidates,
  useSeriesOne,
  useSeriesOptions,
} from './api.ts';
import { useRegressions } from '../regressions/api.ts';
import { SeriesResults, SeriesSearchBox, useFindText } from './SeriesFinder.tsx';
import { ByHostPanel } from './ByHostPanel.tsx';
import { GroupByPanel } from './GroupByPanel.tsx';
import { formatInstant } from '../../lib/time.ts';
import type { Series, SeriesFacet, SeriesList } from '@onset/contract';
import { selectionOf, type Selection } from './selection.ts';
import { linkWithGlobals, useRange, useScale, useUrlState } from '../../state/url.ts';
import { resolveRange, zoomRange } from '../../state/timeRange.ts';
import { ChartOrState, Empty, ErrorState, Loading } from '../../components/States.tsx';
import { Panel, ScaleToggle, Select } from '../../components/Controls.tsx';
import { QuantilesChart } from '../../components/QuantilesChart.tsx';
import { HeatmapChart } from '../../components/graphs/HeatmapChart.tsx';
import { shapeQuantiles } from '../../components/graphs/quantileData.ts';
import { shapeHeatmap } from '../../components/graphs/heatmapData.ts';
import { toMarkers } from '../../components/graphs/markerData.ts';
import { DeployList } from '../../components/DeployList.tsx';
import { EdgePanel } from '../../components/EdgePanel.tsx';

import { reportedViews } from '../../components/graphs/edgeData.ts';
import { parseDuration } from '@onset/contract';
import { callsFromText } from './callsFrom.ts';
import { SignaturesNote } from './Signatures.tsx';
import { ChangesPanel } from './ChangesPanel.tsx';
import { edgeLabel, formatRatio } from '../../lib/format.ts';
import { overlayOf, shiftTimeText, withOverlay } from '../../components/graphs/overlayData.ts';
import { parseTime } from '@onset/contract';
import {
  ComparePanel,
  DrillControls,
  selectionFromParams,
  selectionPatch,
  type DragMode,
} from './ComparePanel.tsx';

const QUANTILES = ['0.5', '0.9', '0.99', '0.999'];
const STEPS = ['', '1m', '5m', '15m', '1h', '6h', '1d'];
const QUANTILE_CHART_HEIGHT = 320;
/** The pickers that narrow the series selection, in order (the peer picker shows only when it can matter). */
const SELECTION_PICKERS = [
  {
    field: 'service',
    label: 'Service',
    allLabel: 'Any service',
    options: 'services',
    noun: 'services',
  },
  { field: 'op', label: 'Operation', allLabel: 'Any op', options: 'ops', noun: 'ops' },
  { field: 'view', label: 'View', allLabel: 'Any view', options: 'views', noun: 'views' },
  { field: 'name', label: 'Name', allLabel: 'Any name', options: 'names', noun: 'names' },
] as const;
const NO_FACET: SeriesFacet = { values: [], total: 0 };
const count = (n: number) => n.toLocaleString('en-US');
const HEATMAP_HEIGHT = 260;

export default function ExplorerPage() {
  const { get, set, params } = useUrlState();
  const [range, setRange] = useRange();
  const [scale, setScale] = useScale();
  const qc = useQueryClient();

  // The URL names the series either by id (read by its id) or by its labels; labels win for the
  // pickers. The pickers' options and the series a choice designates come from the server, over
  // every series.
  const wanted = get('series') || undefined;
  const one = useSeriesOne(wanted);
  const byId = one.data && one.data.id === wanted ? one.data : undefined;
  const sel: Selection = byId
    ? selectionOf(byId)
    : {
        service: get('service') || undefined,
        op: get('op') || undefined,
        view: get('view') || undefined,
        name: get('name') || undefined,
        peer: params.has('peer') ? get('peer') : undefined,
      };
  const options = useSeriesOptions(sel);
  const facets = options.data;
  const picked = SELECTION_PICKERS.some((p) => !!sel[p.field]) || sel.peer !== undefined;
  const candidates = useSeriesCandidates(!byId && picked ? facets?.selection : undefined);
  // One candidate left: that is the series, even if not every picker was set.
  const match =
    candidates.data?.total === 1 && facets?.matches === 1 ? candidates.data.series[0] : undefined;
  const series = byId ?? match;
  const resolving =
    (!!wanted && one.isPending) || (picked && !byId && (options.isPending || candidates.isPending));
  const host = get('host');
  const qs = (get('q') || '0.5,0.99').split(',').filter((q) => QUANTILES.includes(q));
  const step = get('step');
  const [find, setFind] = useFindText();

  const pick = async (key: keyof Selection, value: string) => {
    const asked: Selection = { ...sel, [key]: value || undefined };
    // The server drops later choices that the new one makes impossible (none when it cannot answer).
    const next: Selection = await fetchSeriesOptions(qc, asked).then(
      (o) => o.selection,
      () => asked,
    );
    set(
      {
        series: null,
        service: next.service,
        op: next.op,
        view: next.view,
        name: next.name,
        peer: next.peer ?? null,
        host: null,
        ...selectionPatch(null),
      },
      { push: true },
    );
  };

  return (
    <div className="page">
      <div className="page-head">
        <h1>Explorer</h1>
        <ScaleToggle scale={scale} onChange={setScale} />
      </div>
      <SeriesSearchBox value={find} onChange={setFind} />
      {/* While the series the URL names (by id or by labels) is looked up, the list it will
          replace stays out: drawing it first pushed everything below down and back up (layout
          shift 0.14 by id, 0.59 by labels, on a fresh load). */}
      {(!series && !resolving) || find ? (
        <Panel title={find ? 'Matching series' : 'Series, most recently seen first'}>
          <SeriesResults find={find} range={range} selectedId={series?.id} />
        </Panel>
      ) : null}
      <form className="pickers" onSubmit={(e) => e.preventDefault()} aria-label="Choose a series">
        {SELECTION_PICKERS.map((p) => (
          <Select
            key={p.field}
            label={p.label}
            value={sel[p.field] ?? ''}
            options={(facets?.[p.options] ?? NO_FACET).values}
            allLabel={p.allLabel}
            onChange={(v) => void pick(p.field, v)}
          />
        ))}
        {(facets?.peers.values.length ?? 0) > 1 || (sel.peer ?? '') !== '' ? (
          <Select
            label="Peer"
            value={sel.peer ?? ''}
            options={facets?.peers.values ?? []}
            allLabel="Any peer"
            onChange={(v) => void pick('peer', v)}
          />
        ) : null}
        <Select
          label="Host"
          value={host}
          options={series?.hosts ?? []}
          allLabel="All hosts"
          onChange={(v) => set({ host: v || null })}
        />
        <fieldset className="field quantile-picks">
          <legend>Quantiles</legend>
          {QUANTILES.map((q) => (
            <label key={q} className="check">
              <input
                type="checkbox"
                checked={qs.includes(q)}
                onChange={(e) => {
                  const next = e.target.checked ? [...qs, q] : qs.filter((x) => x !== q);
                  set({
                    q: next.length ? QUANTILES.filter((x) => next.includes(x)).join(',') : null,
                  });
                }}
              />
              p{Number(q) * 100}
            </label>
          ))}
        </fieldset>
        <Select
          label="Resolution"
          value={step}
          options={STEPS.map((s) => ({ value: s, label: s || 'auto' }))}
          onChange={(v) => set({ step: v || null })}
        />
      </form>

      {facets
        ? SELECTION_PICKERS.filter(
            (p) => facets[p.options].total > facets[p.options].values.length,
          ).map((p) => (
            <p
              key={p.field}
              className="muted small"
              data-testid="series-picker-truncated"
              role="note"
            >
              The {p.label} picker lists the first {count(facets[p.options].values.length)} of{' '}
              {count(facets[p.options].total)} {p.noun}: choose one above it to narrow, or type
              words of the series in the search above, which finds any of them.
            </p>
          ))
        : null}
      {facets === undefined || (wanted && one.isPending) ? (
        options.error ? (
          <ErrorState
            error={options.error}
            what="the series pickers"
            onRetry={() => options.refetch()}
          />
        ) : (
          <Loading label="Loading series…" height={QUANTILE_CHART_HEIGHT + HEATMAP_HEIGHT} />
        )
      ) : facets.services.total === 0 ? (
        <Empty title="No latency series yet" height={QUANTILE_CHART_HEIGHT}>
          Send OpenTelemetry traces to <code>POST /v1/traces</code> (port 4318 or this port), or
          start the local agent (<code>npm start</code>). Series appear here within seconds.
        </Empty>
      ) : series ? (
        <SeriesCharts
          series={series}
          host={host}
          qs={qs}
          step={step}
          scale={scale}
          range={range}
          setRange={setRange}
        />
      ) : picked ? (
        candidates.data ? (
          <Candidates page={candidates.data} params={params} />
        ) : candidates.error ? (
          <ErrorState
            error={candidates.error}
            what="the matching series"
            onRetry={() => candidates.refetch()}
          />
        ) : (
          <Loading label="Finding the matching series…" height={QUANTILE_CHART_HEIGHT} />
        )
      ) : null}
    </div>
  );
}

function Candidates({ page, params }: { page: SeriesList; params: URLSearchParams }) {
  const candidates = page.series;
  return (
    <Panel title={`${count(page.total)} matching series: pick one`}>
      {page.total > candidates.length ? (
        <p className="muted small" data-testid="series-candidates-count" role="note">
          Showing {count(candidates.length)} of {count(page.total)}: choose more above, or type
          words of the series in the search, to narrow.
        </p>
      ) : null}
      {candidates.length === 0 ? (
        <Empty title="No series matches this choice">Clear a picker above.</Empty>
      ) : (
        <ul className="candidate-list">
          {candidates.map((s) => (
            <li key={s.id}>
              <Link to={linkWithGlobals('/explorer', params, { series: s.id })}>
                <b>{edgeLabel(s)}</b> · {s.op} · {s.view} · <span className="mono">{s.name}</span>
              </Link>{' '}
              <span className="muted small">{s.hosts.length} host(s)</span>
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}

function SeriesCharts({
  series,
  host,
  qs,
  step,
  scale,
  range,
  setRange,
}: {
  series: Series;
  host: string;
  qs: string[];
  step: string;
  scale: 'log' | 'linear';
  range: { from: string; to: string };
  setRange: (r: { from: string; to: string }) => void;
}) {
  const { params, set } = useUrlState();
  const quantiles = useQuantiles(series.id, {
    range,
    step: step || undefined,
    host: host || undefined,
    q: qs.join(',') || '0.5',
  });
  const nowMs = Date.now();
  const resolvedNow = resolveRange(range, nowMs);
  // The same window a day or a week earlier, drawn dashed over the quantiles.
  const overlay = overlayOf(params.get('overlay'));
  const earlierRange = overlay
    ? {
        from: shiftTimeText(range.from, overlay.shiftMs, nowMs, parseTime),
        to: shiftTimeText(range.to, overlay.shiftMs, nowMs, parseTime),
      }
    : range;
  const earlier = useQuantiles(
    series.id,
    {
      range: earlierRange,
      step: step || undefined,
      host: host || undefined,
      q: qs.join(',') || '0.5',
    },
    !!overlay,
  );
  const dragMode: DragMode = params.get('drag') === 'compare' ? 'compare' : 'zoom';
  const chartSelection = selectionFromParams(params);
  // The heatmap keeps ≤ 2,000 columns: a 1-minute step over 30 days would be unreadable (and refused).
  const heatStep =
    step && (resolvedNow.toMs - resolvedNow.fromMs) / durationOr(step, 0) <= 2000
      ? step
      : undefined;
  const heatmap = useHeatmap(series.id, { range, step: heatStep, host: host || undefined });
  const deploys = useDeploys({ from: range.from, to: range.to, series_id: series.id });
  // Open regressions of this series: their onsets are drawn on the chart.
  const regressions = useRegressions({ series_id: series.id, status: 'active' });
  const openRegressions = regressions.data ?? [];
  const onsetMs = openRegressions.length
    ? Math.min(...openRegressions.map((r) => Date.parse(r.onset)))
    : undefined;

  // The resolved range of the last answer keeps the x axis still while a refresh is in flight.
  const fromMs = quantiles.data ? Date.parse(quantiles.data.from) : resolvedNow.fromMs;
  const toMs = quantiles.data ? Date.parse(quantiles.data.to) : resolvedNow.toMs;
  // Keyed on the numbers: the same window must not rebuild the charts (and their markers).
  const resolved = useMemo(() => ({ fromMs, toMs }), [fromMs, toMs]);
  const onZoom = useCallback((a: number, b: number) => setRange(zoomRange(a, b)), [setRange]);
  // In compare mode a drag selects calls: a time range on the quantiles, a box on the heatmap.
  const onSelectRange = useCallback(
    (a: number, b: number) =>
      set(selectionPatch({ selFromMs: Math.min(a, b), selToMs: Math.max(a, b) }), { push: true }),
    [set],
  );
  const onSelectBox = useCallback(
    (a: number | null, b: number | null, lo: number | null, hi: number | null) =>
      set(
        selectionPatch({
          selFromMs: a ?? undefined,
          selToMs: b ?? undefined,
          minMs: lo ?? undefined,
          maxMs: hi ?? undefined,
        }),
        { push: true },
      ),
    [set],
  );

  const qsKey = qs.join(',');
  const earlierData = overlay ? earlier.data : undefined;
  const frame = useMemo(() => {
    if (!quantiles.data) return null;
    const opts = {
      quantiles: qsKey ? qsKey.split(',') : undefined,
      dropNonPositive: scale === 'log',
    };
    const now = shapeQuantiles(quantiles.data, opts);
    return overlay && earlierData
      ? withOverlay(now, shapeQuantiles(earlierData, opts), overlay.shiftMs, overlay.label)
      : now;
  }, [quantiles.data, qsKey, scale, overlay, earlierData]);
  const heat = useMemo(
    () => (heatmap.data ? shapeHeatmap(heatmap.data.points, heatmap.data.step_ms) : null),
    [heatmap.data],
  );
  const relevant = useMemo(() => deploys.data ?? [], [deploys.data]);
  const markers = useMemo(() => toMarkers(relevant, resolved), [relevant, resolved]);
  const newestFirst = useMemo(
    () => [...relevant].sort((a, b) => Date.parse(b.at) - Date.parse(a.at)),
    [relevant],
  );

  const onEdge = series.view !== 'internal' && (!!series.peer || series.view === 'server');
  const edgeQuery = useEdge(series.id, { range }, onEdge);
  // Worth a panel only when there is something to compare: two of the three views.
  const edge = onEdge && reportedViews(edgeQuery.data) >= 2 ? edgeQuery.data : undefined;
  const title = `${edgeLabel(series)} · ${series.op} · ${series.view} · ${series.name}`;
  // The quantiles chart and the heatmap show the same window and markers, zoom alike and share the cursor.
  const linked = {
    range: resolved,
    markers,
    onZoom: dragMode === 'compare' ? onSelectRange : onZoom,
    syncKey: 'explorer',
  };

  return (
    <>
      <Panel
        title={
          <>
            {title}
            {host ? <span className="muted"> · host {host}</span> : null}
          </>
        }
        actions={
          <>
            <Link className="btn" to={linkWithGlobals('/slos', params, { create: series.id })}>
              Create SLO from this series
            </Link>
          </>
        }
      >
        <p className="muted small chart-help">
          {dragMode === 'compare'
            ? 'Drag across the quantiles to select a time range, or a box on the heatmap to select a time range and latency band: its calls are compared with the rest of the window.'
            : 'Drag across a chart to zoom in; the range goes into the URL.'}{' '}
          Markers: C code, D dependency, K kernel, F config, I infra.
        </p>
        <DrillControls
          mode={dragMode}
          onMode={(m) => set({ drag: m === 'zoom' ? null : m })}
          overlay={overlay?.value ?? ''}
          onOverlay={(v) => set({ overlay: v || null })}
        />
        {overlay && earlier.error ? (
          <ErrorState error={earlier.error} what={`the window ${overlay.label}`} />
        ) : null}
        <p className="muted small" data-testid="series-calls-from">
          {callsFromText(series)}
        </p>
        <SignaturesNote seriesId={series.id} range={range} />
        {openRegressions.map((r) => (
          <p key={r.id} className="regression-note" data-testid="explorer-regression">
            <Link to={linkWithGlobals(`/regressions/${r.id}`, params, { from: null, to: null })}>
              {r.status === 'acknowledged' ? 'Acknowledged' : 'Open'} regression of {r.metric}{' '}
              {formatRatio(r.metric === 'p99' ? r.ratio_p99 : r.ratio_p50)} since{' '}
              {formatInstant(Date.parse(r.onset))}
            </Link>{' '}
            <span className="muted small">(the onset line on the chart)</span>
          </p>
        ))}
        <QuantilesChart
          {...linked}
          onsetSec={onsetMs === undefined ? undefined : onsetMs / 1000}
          frame={frame}
          query={quantiles}
          scale={scale}
          height={QUANTILE_CHART_HEIGHT}
          chartId="quantiles"
          title={`Latency quantiles of ${title}, ${scale} scale, with ${markers.length} deploy markers`}
        />
      </Panel>
      <GroupByPanel
        seriesId={series.id}
        step={step || undefined}
        host={host || undefined}
        page={{ range, resolved, scale, markers, onsetMs, onZoom }}
      />
      {series.hosts.length > 1 && !host ? (
        <ByHostPanel seriesId={series.id} range={range} onPick={(h) => set({ host: h })} />
      ) : null}
      <Panel title="Latency heatmap (time × log latency)">
        <ChartOrState
          data={heat}
          query={heatmap}
          what="the heatmap"
          loadingLabel="Loading heatmap…"
          height={HEATMAP_HEIGHT}
        >
          {(shaped) => (
            <HeatmapChart
              {...linked}
              onSelectBox={dragMode === 'compare' ? onSelectBox : undefined}
              frame={shaped}
              height={HEATMAP_HEIGHT}
              chartId="heatmap"
              title={`Latency heatmap of ${title}`}
            />
          )}
        </ChartOrState>
      </Panel>
      {chartSelection ? (
        <ComparePanel
          seriesId={series.id}
          window={resolved}
          selection={chartSelection}
          onClear={() => set(selectionPatch(null))}
        />
      ) : null}
      {edge ? (
        <Panel title="Edge: client, server and gap">
          {series.view !== 'gap' ? (
            <SignaturesNote
              seriesId={edge.views.find((v) => v.view === 'gap')?.series?.id}
              range={range}
              what="the edge's gap"
            />
          ) : null}
          <EdgePanel
            edge={edge}
            range={range}
            resolved={resolved}
            scale={scale}
            markers={markers}
            onZoom={onZoom}
          />
        </Panel>
      ) : null}
      <Panel title={`Deploy markers in range (${relevant.length})`}>
        {deploys.error ? (
          <ErrorState error={deploys.error} what="deploy markers" />
        ) : relevant.length ? (
          <DeployList deploys={newestFirst} compact />
        ) : (
          <p className="muted">No deploy touched this series in the range.</p>
        )}
      </Panel>
      <ChangesPanel
        seriesId={series.id}
        range={range}
        rangeMs={resolvedNow.toMs - resolvedNow.fromMs}
      />
    </>
  );
}

function durationOr(text: string, dflt: number): number {
  try {
    return parseDuration(text);
  } catch {
    return dflt;
  }
}
