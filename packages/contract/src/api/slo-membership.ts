import { Type, type Static } from '@sinclair/typebox';

/** GET /api/v1/slos/watching: which SLOs count each series (PostgreSQL's regex decides name_match). */
export const SloWatchingQuery = Type.Object({
  series_id: Type.String({
    pattern: '^[0-9]{1,18}(,[0-9]{1,18}){0,999}$',
    description: 'comma-separated series ids (up to 1000)',
  }),
});
export type SloWatchingQuery = Static<typeof SloWatchingQuery>;

export const SloWatching = Type.Object({
  series: Type.Array(
    Type.Object({
      series_id: Type.String(),
      slo_ids: Type.Array(Type.String(), { description: 'SLOs whose selector matches the series' }),
    }),
  ),
});
export type SloWatching = Static<typeof SloWatching>;
