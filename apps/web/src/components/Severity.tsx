/** Severity dots (high / medium / low) and the legend that says what they mean. */
import type { SeverityLevel } from '../lib/severity.ts';

const LEVEL_TEXT: Record<SeverityLevel, string> = {
  high: 'high',
  medium: 'medium',
  low: 'low',
};

/** One dot; its accessible name is the level, the title says how it was scored. */
export function SeverityDot({ level, title }: { level: SeverityLevel; title?: string }) {
  return (
    <span
      className={`sev-dot sev-${level}`}
      role="img"
      aria-label={`${LEVEL_TEXT[level]} severity`}
      title={title ?? `${LEVEL_TEXT[level]} severity`}
    />
  );
}

/** "● high ● medium ● low — ratio × traffic × SLO impact, relative to the worst open one". */
export function SeverityLegend() {
  return (
    <div className="sev-legend muted small" data-testid="severity-legend">
      <span className="sr-only">Severity legend: </span>
      {(['high', 'medium', 'low'] as const).map((l) => (
        <span key={l} className="sev-legend-item">
          <span className={`sev-dot sev-${l}`} aria-hidden="true" /> {LEVEL_TEXT[l]}
        </span>
      ))}
      <span className="sev-legend-note">
        severity = slowdown × traffic × SLO impact, relative to the worst open regression
      </span>
    </div>
  );
}
