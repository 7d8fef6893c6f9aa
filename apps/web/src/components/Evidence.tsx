/**
 * Pieces the regression evidence, the Explorer's selection comparison and its signatures note
 * draw alike: a hint naming a known mechanism, and a share bar. Formatting only.
 */
import type { Hint } from '@onset/contract';

export const sharePct = (x: number) => `${Math.round(x * 100)}%`;

/** One hint: its title, id and confidence, then the measured numbers in its detail. */
export function HintItem({ hint: h }: { hint: Hint }) {
  return (
    <li data-hint={h.id}>
      <strong>{h.title}</strong>{' '}
      <span className="muted small">
        {h.id} · confidence {sharePct(h.confidence)}
      </span>
      <p className="small">{h.detail}</p>
    </li>
  );
}

/** A bar as long as a share (120 px for all of it), red for the side under suspicion. */
export function ShareBar({ share, tone, bad }: { share: number; tone: string; bad: boolean }) {
  return (
    <span
      className={`share-bar share-${tone}`}
      style={{
        display: 'inline-block',
        width: `${Math.max(1, share * 120)}px`,
        height: 8,
        background: bad ? 'var(--bad, #d9534f)' : 'var(--muted, #999)',
      }}
      aria-hidden="true"
    />
  );
}
