import type { Series } from '@onset/contract';

/** What the series counts its calls from (api.md "Series": `calls_from`). */
export function callsFromText(s: Pick<Series, 'calls_from' | 'metrics_not_counted'>): string {
  if (s.calls_from === 'metrics')
    return 'Calls counted from OTLP histogram metrics (this series has no spans).';
  if (s.calls_from === 'paired_spans')
    return 'Calls counted from paired client and server spans (a view of the edge).';
  return s.metrics_not_counted
    ? 'Calls counted from spans; OTLP metrics of the same calls are not added.'
    : 'Calls counted from spans.';
}
