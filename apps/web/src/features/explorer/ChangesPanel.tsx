/**
 * "Changes looking back": the server's retrospective segmentation of the window
 * (GET /api/v1/series/{id}/segments, docs/detection.md "Retrospective segmentation"), listed
 * as it answers: where the fitted lines either side jump, steps (from the detector's smallest
 * reported step, ×1.2) and smaller shifts, up and down. They never open a regression or page;
 * the panel says so, and links nothing it does not know. Nothing is computed here beyond
 * formatting.
 */
import type { SegmentChangeOut } from '@onset/contract';
import { Panel } from '../../components/Controls.tsx';
import { Empty, QueryView } from '../../components/States.tsx';
import { formatLatencyMs, formatRatio } from '../../lib/format.ts';
import { formatInstant } from '../../lib/time.ts';
import type { RangeText } from '../../state/timeRange.ts';
import { useSegments } from './api.ts';

/** The endpoint reads at most a day of minutes (docs/api.md). */
export const SEGMENTS_MAX_RANGE_MS = 24 * 3_600_000;

const kindText = (c: SegmentChangeOut) =>
  `${c.kind === 'step' ? 'Step' : 'Shift'} ${c.direction === 'improvement' ? 'down' : 'up'}`;

export function ChangesPanel({
  seriesId,
  range,
  rangeMs,
}: {
  seriesId: string;
  range: RangeText;
  /** The resolved range's length: past a day the endpoint is not asked. */
  rangeMs: number;
}) {
  const tooLong = rangeMs > SEGMENTS_MAX_RANGE_MS;
  const q = useSegments(seriesId, range, !tooLong);
  return (
    <Panel title="Changes looking back (never paged)">
      <p className="muted small">
        The window cut into segments of one straight line each (level and trend, per quantile); a
        change is where the lines either side jump, so growth the trend explains is none. Steps
        (×1.2 or more) and smaller shifts, up and down. Only the streaming detector opens
        regressions and pages.
      </p>
      {tooLong ? (
        <Empty title="Zoom to a day or less">This reads at most 24 hours of minutes.</Empty>
      ) : (
        <QueryView
          query={q}
          what="changes looking back"
          isEmpty={(d) => d.changes.length === 0}
          empty={
            <Empty title="No change in this window">
              {q.data ? `${q.data.points} minutes with data read.` : null}
            </Empty>
          }
        >
          {(d) => (
            <table className="table" data-testid="segment-changes">
              <thead>
                <tr>
                  <th>Since</th>
                  <th>Quantile</th>
                  <th>Change</th>
                  <th>Ratio</th>
                  <th>Before → after</th>
                </tr>
              </thead>
              <tbody>
                {d.changes.map((c) => (
                  <tr
                    key={`${c.metric}-${c.onset}`}
                    data-testid="segment-change"
                    data-onset={c.onset}
                    data-metric={c.metric}
                  >
                    <td>{formatInstant(Date.parse(c.onset))}</td>
                    <td>{c.metric}</td>
                    <td>{kindText(c)}</td>
                    <td>{formatRatio(c.ratio)}</td>
                    <td>
                      {formatLatencyMs(c.before_ms)} → {formatLatencyMs(c.after_ms)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </QueryView>
      )}
    </Panel>
  );
}
