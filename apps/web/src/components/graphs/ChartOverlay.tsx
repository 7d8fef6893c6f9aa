/**
 * DOM drawn over a uPlot chart: deploy marker chips (focusable, with the
 * marker's text in a tooltip), the onset label, and shaded latency levels.
 * Being DOM, they are keyboard reachable and readable by screen readers, and
 * CI-provided text is rendered by React as text, never as HTML.
 */
import { useState } from 'react';
import type uPlot from 'uplot';
import { plotBox } from './UPlotChart.tsx';
import { kindLetter, stackChips, type ChartMarker } from './markerData.ts';
import { formatInstant } from '../../state/timeRange.ts';

export interface LevelBand {
  key: 'before' | 'after' | string;
  label: string;
  /** Seconds. */
  x0: number;
  x1: number;
  /** ms */
  lo: number;
  hi: number;
}

const CHIP = 18;

export function MarkerChips({
  u,
  markers,
  onSelect,
  selectedId,
}: {
  u: uPlot;
  markers: readonly ChartMarker[];
  onSelect?: (id: string) => void;
  selectedId?: string | null;
}) {
  const box = plotBox(u);
  const [hover, setHover] = useState<string | null>(null);
  const visible = markers
    .map((m) => ({ m, x: u.valToPos(m.t, 'x') }))
    .filter(({ x }) => x >= -1 && x <= box.width + 1);
  const rows = stackChips(
    visible.map((v) => v.x),
    CHIP,
  );
  return (
    <>
      {visible.map(({ m, x }, i) => {
        const top = box.top - CHIP - 2 - rows[i]! * (CHIP - 4);
        const isTop = m.suspectRank === 1;
        const open = hover === m.id || selectedId === m.id;
        return (
          <div
            key={m.id}
            className="marker-anchor"
            style={{ left: box.left + x, top: Math.max(0, top) }}
          >
            <button
              type="button"
              className={`marker-chip kind-${m.kind}${isTop ? ' top-suspect' : ''}${m.suspectRank > 1 ? ' suspect' : ''}`}
              // The accessible name starts with the chip's visible text (WCAG 2.5.3 label in name).
              aria-label={`${isTop ? `${kindLetter(m.kind)} ★ top suspect` : m.suspectRank > 1 ? `${kindLetter(m.kind)} suspect #${m.suspectRank}` : `${kindLetter(m.kind)} deploy marker`}: ${m.title} at ${formatInstant(m.t * 1000)}`}
              data-marker-id={m.id}
              data-kind={m.kind}
              onMouseEnter={() => setHover(m.id)}
              onMouseLeave={() => setHover((h) => (h === m.id ? null : h))}
              onFocus={() => setHover(m.id)}
              onBlur={() => setHover((h) => (h === m.id ? null : h))}
              onClick={() => onSelect?.(m.id)}
            >
              {isTop ? `${kindLetter(m.kind)} ★` : kindLetter(m.kind)}
            </button>
            {open ? (
              <div className="marker-tip" role="tooltip">
                <div className="marker-tip-title">
                  {isTop ? 'Top suspect · ' : ''}
                  {m.title}
                </div>
                <div className="muted">{formatInstant(m.t * 1000, true)}</div>
                {m.reason ? <div className="marker-tip-reason">{m.reason}</div> : null}
                {m.description ? <div className="marker-tip-desc">{m.description}</div> : null}
              </div>
            ) : null}
          </div>
        );
      })}
    </>
  );
}

export function OnsetLabel({ u, onsetSec }: { u: uPlot; onsetSec: number }) {
  const box = plotBox(u);
  const x = u.valToPos(onsetSec, 'x');
  if (x < 0 || x > box.width) return null;
  return (
    <div
      className="onset-label"
      style={{ left: box.left + x, top: box.top + box.height - 18 }}
      data-testid="onset-line"
    >
      onset {formatInstant(onsetSec * 1000)}
    </div>
  );
}

/** Shaded rectangles: time span × latency interval (e.g. the before and after p50–p99 levels). */
export function Bands({
  u,
  bands,
  scaleKey = 'y',
}: {
  u: uPlot;
  bands: readonly LevelBand[];
  scaleKey?: string;
}) {
  const box = plotBox(u);
  return (
    <>
      {bands.map((b) => {
        const xa = Math.max(0, u.valToPos(b.x0, 'x'));
        const xb = Math.min(box.width, u.valToPos(b.x1, 'x'));
        // A level band is at least 4 px tall so a tight p50≈p99 level stays visible.
        let ya = u.valToPos(b.hi, scaleKey);
        let yb = u.valToPos(b.lo, scaleKey);
        if (!Number.isFinite(ya) || !Number.isFinite(yb) || xb <= xa) return null;
        if (yb - ya < 4) {
          const mid = (ya + yb) / 2;
          ya = mid - 2;
          yb = mid + 2;
        }
        ya = Math.max(0, ya);
        yb = Math.min(box.height, yb);
        return (
          <div
            key={b.key}
            className={`level-band band-${b.key}`}
            data-testid={`band-${b.key}`}
            title={b.label}
            style={{
              left: box.left + xa,
              width: xb - xa,
              top: box.top + ya,
              height: Math.max(0, yb - ya),
            }}
          >
            <span className="level-band-label">{b.label}</span>
          </div>
        );
      })}
    </>
  );
}
