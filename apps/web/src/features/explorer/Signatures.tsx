/**
 * Known mechanisms a series' calls show in the window whether or not anything changed (the
 * server's GET /api/v1/series/{id}/signatures: a Nagle tail present from the first minute).
 * Nothing is computed here beyond formatting; nothing is drawn when none matches.
 */
import type { RangeText } from '../../state/timeRange.ts';
import { useSignatures } from './api.ts';
import { HintItem } from '../../components/Evidence.tsx';

export function SignaturesNote({
  seriesId,
  range,
  what,
}: {
  seriesId: string | undefined;
  range: RangeText;
  /** Whose calls, when not the page's series (e.g. "the gap"). */
  what?: string;
}) {
  const q = useSignatures(seriesId, range);
  const hints = q.data?.hints ?? [];
  if (!hints.length) return null;
  return (
    <div className="signatures" data-testid="signatures" data-series={seriesId}>
      <p className="small">
        <b>Present in this window{what ? ` (${what})` : ''}</b>{' '}
        <span className="muted">
          — a known mechanism, whether or not anything changed ({q.data!.calls} calls read)
        </span>
      </p>
      <ul className="hint-list">
        {hints.map((h) => (
          <HintItem key={h.id} hint={h} />
        ))}
      </ul>
    </div>
  );
}
