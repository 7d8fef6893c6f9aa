/**
 * One regression, for the engineer who was just paged: what regressed, since
 * when, by how much, which deploy is the suspect and why, which hosts or
 * versions, and the SLO burn, above the fold; the evidence (charts) below.
 */
import { useCallback, useEffect, useMemo } from 'react';
import { useParams } from 'react-router-dom';
import { useDeploys } from '../deploys/api.ts';
import { useQuantiles, useSeriesByLabels, useSeriesOne } from '../explorer/api.ts';
import { useRegression } from './api.ts';
import { useSlos } from '../slos/api.ts';
import type { Regression } from '@onset/contract';
import { ApiError } from '../../api/client.ts';
import { useRange, useScale, useUrlState } from '../../state/url.ts';
import { regressionWindow, resolveRange, zoomRange } from '../../state/timeRange.ts';
import { slosWatching } from '../../lib/severity.ts';
import { useSloWatching } from '../slos/api.ts';
import { edgeLabel } from '../../lib/format.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';
import type { PageChartContext } from '../../components/graphs/BreakdownChart.tsx';
import { toMarkers } from '../../components/graphs/markerData.ts';
import { EdgePanel } from '../../components/EdgePanel.tsx';
import { useEdge } from '../explorer/api.ts';
import { reportedViews } from '../../components/graphs/edgeData.ts';
import { CohortPanel } from './CohortPanel.tsx';
import { DeployList } from '../../components/DeployList.tsx';
import { MemberList } from './MemberList.tsx';
import { SuspectList } from '../../components/Suspects.tsx';
import { RegressionAlerts } from './RegressionAlerts.tsx';
import { EvidenceSection } from './EvidenceSection.tsx';
import { RegressionHead } from './RegressionHead.tsx';
import { RegressionFacts } from './RegressionFacts.tsx';
import { MAIN_HEIGHT, RegressionChart } from './RegressionChart.tsx';
import { cohortSources, findSeries } from './regressionSeries.ts';

export default function RegressionPage() {
  const { id } = useParams();
  const reg = useRegression(id);
  if (reg.data === undefined)
    return (
      <div className="page">
        {reg.error ? (
          <ErrorState
            error={reg.error}
            what={
              reg.error instanceof ApiError &&
              reg.error.status === 404 &&
              !reg.error.missingEndpoint
                ? `regression ${id} (it may have been deleted)`
                : `regression ${id}`
            }
            onRetry={() => reg.refetch()}
          />
        ) : (
          <Loading label="Loading the regression…" height={MAIN_HEIGHT + 200} />
        )}
      </div>
    );
  return <RegressionView r={reg.data} />;
}

function RegressionView({ r }: { r: Regression }) {
  const { params, set } = useUrlState();
  const onsetMs = Date.parse(r.onset);
  const [urlRange, setRange] = useRange();
  const hasRange = params.has('from');
  const dflt = useMemo(() => regressionWindow(onsetMs, Date.now()), [onsetMs]);
  // Put the window in the URL so this exact view is what a shared link shows.
  useEffect(() => {
    if (!hasRange) set({ from: dflt.from, to: dflt.to });
  }, [hasRange, dflt, set]);
  const range = hasRange ? urlRange : dflt;
  const [scale, setScale] = useScale();
  // By its id where the regression has one, else by its labels: both looked up on the server.
  const seriesList = useSeriesByLabels(r);
  const one = useSeriesOne(r.series_id ? String(r.series_id) : undefined);
  const series = one.data ?? findSeries(r, seriesList.data ?? []);
  const quantiles = useQuantiles(series?.id, { range, q: '0.5,0.99' });
  const seriesId = r.series_id ?? series?.id;
  const deploys = useDeploys(
    { from: range.from, to: range.to, series_id: seriesId },
    seriesId !== undefined,
  );
  const slos = useSlos();
  const { watching } = useSloWatching([r.series_id]);

  const fallback = resolveRange(range, Date.now());
  const fromMs = quantiles.data ? Date.parse(quantiles.data.from) : fallback.fromMs;
  const toMs = quantiles.data ? Date.parse(quantiles.data.to) : fallback.toMs;
  const resolved = useMemo(() => ({ fromMs, toMs }), [fromMs, toMs]);
  const suspects = useMemo(() => r.suspects ?? [], [r.suspects]);
  const suspectIds = useMemo(
    () => new Map(suspects.map((s, i) => [String(s.deploy_id), i + 1])),
    [suspects],
  );
  const shownDeploys = useMemo(() => {
    // The server keeps the markers that can explain this series (the rule attribution uses),
    // so every suspect is among them.
    return deploys.data ?? [];
  }, [deploys.data]);
  const markers = useMemo(
    () => toMarkers(shownDeploys, resolved, suspects),
    [shownDeploys, resolved, suspects],
  );
  const onZoom = useCallback((a: number, b: number) => setRange(zoomRange(a, b)), [setRange]);
  // The edge and cohort charts line up with the main chart: same window, scale, markers and onset.
  const breakdownCharts: PageChartContext = { range, resolved, scale, markers, onsetMs, onZoom };
  const isEdge = !!r.peer || r.view === 'gap' || r.view === 'client';
  const edgeQuery = useEdge(seriesId, { range, onsetMs }, isEdge);
  const edge = isEdge && reportedViews(edgeQuery.data) >= 1 ? edgeQuery.data : undefined;
  const matchingSlos = slosWatching(r, slos.data ?? [], watching);
  const top = suspects[0];
  const topDeploy = top
    ? (deploys.data ?? []).find((d) => String(d.id) === String(top.deploy_id))
    : undefined;
  const where = `${edgeLabel(r)} · ${r.op} · ${r.view}`;

  return (
    <div className="page regression-page">
      <RegressionHead r={r} where={where} />

      <RegressionFacts
        r={r}
        onsetMs={onsetMs}
        top={top}
        topDeploy={topDeploy}
        series={series}
        matchingSlos={matchingSlos}
      />

      <RegressionChart
        r={r}
        series={series}
        seriesListed={!!seriesList.data}
        quantiles={quantiles}
        range={range}
        scale={scale}
        setScale={setScale}
        resolved={resolved}
        markers={markers}
        onsetMs={onsetMs}
        onZoom={onZoom}
        where={where}
        top={top}
      />

      {r.members.length > 1 ? (
        <Panel title={`One incident, found on ${r.members.length} series`}>
          <MemberList members={r.members} />
        </Panel>
      ) : null}

      <Panel title={`Suspects (${suspects.length})`}>
        {suspects.length ? (
          <SuspectList suspects={suspects} deploys={deploys.data ?? []} onsetMs={onsetMs} />
        ) : (
          <p className="muted">The engine found no deploy marker that explains this change.</p>
        )}
      </Panel>

      {/* Below the fold: it loads after the page and must not push the chart (layout shift). */}
      <RegressionAlerts id={r.id} />

      <EvidenceSection id={r.id} />

      {edge ? (
        <Panel title="Client, server and gap views of this edge">
          <EdgePanel edge={edge} {...breakdownCharts} />
        </Panel>
      ) : null}

      {series ? (
        <Panel title="Cohort split">
          <CohortPanel sources={cohortSources(series, edge)} hint={r.cohort} {...breakdownCharts} />
        </Panel>
      ) : null}

      <Panel title={`Deploy markers in this window (${shownDeploys.length})`}>
        {shownDeploys.length ? (
          <DeployList
            deploys={[...shownDeploys].sort((a, b) => Date.parse(b.at) - Date.parse(a.at))}
            suspects={suspectIds}
          />
        ) : (
          <p className="muted">No deploy marker in this window.</p>
        )}
      </Panel>
    </div>
  );
}
