/** The detection pass over HTTP: run one now (POST /detect) and the last pass's summary (GET /detect). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type DetectPass, operations } from '@onset/contract';
import type { AppContext } from '../context.ts';
import { HttpError, badRequest } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { lastFinishedOf, progressOf } from './budget.ts';
import { runDetect, settledArrivalMs } from './pass.ts';
import { readLastPass } from './state.ts';

export async function detectionRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, registry, partitions } = ctx;
  // Listed under the regressions tag in /docs, as before the pass had its own folder.
  const tags = ['regressions'];
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/detect',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'Run edge pairing, marker inference and a detection pass over all data now',
        description:
          'Answers when the pass is done (it waits for a pass already running). Minutes up to a minute ago are examined; ' +
          'with `upto`, only minutes before that time (for backfills that replay history in order); ' +
          "with `shards: 'owned'`, only the series of the detection shards this server leases.",
        ...operations['POST /api/v1/detect'],
      },
    },
    async (req) => {
      const now = Date.now();
      const upto = req.body?.upto;
      const uptoMs = upto !== undefined ? parseTime(upto, now, 'upto') : undefined;
      if (uptoMs !== undefined && uptoMs > now) throw badRequest('upto must not be in the future');
      let shards: readonly number[] | undefined;
      if (req.body?.shards === 'owned') {
        if (!ctx.detectLeases)
          throw new HttpError(
            409,
            'conflict',
            'this server leases no detection shards: its scheduler is off',
          );
        await ctx.detectLeases.renew();
        shards = ctx.detectLeases.owned;
      }
      const pairUptoMs = await settledArrivalMs(pool);
      return runDetect(
        { pool, registry, partitions },
        {
          uptoMs,
          pairUptoMs,
          log: req.log,
          shards,
          shardCount: ctx.detectLeases?.count || ctx.config.detectShards,
        },
      );
    },
  );

  api.get(
    '/detect',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'The last detection pass',
        ...operations['GET /api/v1/detect'],
      },
    },
    async () => {
      const r = await readLastPass<DetectPass>(pool);
      return {
        passes: Number(r?.passes ?? 0),
        last:
          r?.result && r.started_at
            ? { ...r.result, started_at: r.started_at.toISOString() }
            : null,
        running: progressOf(pool),
        last_on_this_server: lastFinishedOf<DetectPass>(pool),
        shards: ctx.detectLeases
          ? {
              server: ctx.detectLeases.serverId,
              count: ctx.detectLeases.count,
              owned: ctx.detectLeases.owned,
              series_owned: ctx.detectLeases.seriesOwned,
              servers: ctx.detectLeases.members,
            }
          : null,
      };
    },
  );
}
