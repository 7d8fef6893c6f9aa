import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  operations,
  parseDuration,
  VERDICT_MAX_WAIT_MS,
  VERDICT_WINDOW_BOUNDS_MS,
  type Verdict,
  type VerdictQuery,
} from '@onset/contract';
import type { AppContext } from '../context.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { getMarker } from '../deploys/queries.ts';
import { formatValidationError } from '../deploys/schema.ts';
import { raiseVerdictAlert } from './alerting.ts';
import { computeVerdict, verdictSettings, type VerdictOverrides } from './engine.ts';

const MIN = 60_000;
/** Longest sleep between two reads while waiting (a regression may name the deploy at any time). */
const POLL_MAX_MS = 10_000;
const POLL_MIN_MS = 250;
/** Poll interval while a look is due but edge pairing has not caught up. */
const POLL_BEHIND_MS = 2000;

function durationOf(text: string, field: string): number {
  try {
    return parseDuration(text);
  } catch {
    throw badRequest(`${field}: invalid duration "${text}" (expected e.g. 30s, 5m)`);
  }
}

/** The query's overrides; a 400 naming the field for a wait or window out of bounds. */
function parseQuery(q: VerdictQuery): { waitMs: number; overrides: VerdictOverrides } {
  const waitMs = q.wait !== undefined ? durationOf(q.wait, 'wait') : 0;
  if (waitMs > VERDICT_MAX_WAIT_MS)
    throw badRequest(`wait: at most 15m (got "${q.wait}"); ask again to wait longer`);
  const overrides: VerdictOverrides = {};
  if (q.window !== undefined) {
    const ms = durationOf(q.window, 'window');
    if (ms < VERDICT_WINDOW_BOUNDS_MS.min || ms > VERDICT_WINDOW_BOUNDS_MS.max)
      throw badRequest(`window: 1m to 2h (got "${q.window}")`);
    if (ms % MIN !== 0) throw badRequest(`window: whole minutes (got "${q.window}")`);
    overrides.windowMs = ms;
  }
  if (q.p50_ratio !== undefined) overrides.p50Ratio = q.p50_ratio;
  if (q.p99_ratio !== undefined) overrides.p99Ratio = q.p99_ratio;
  if (q.min_count !== undefined) overrides.minCount = q.min_count;
  return { waitMs, overrides };
}

/** Sleep until `ms` passed or the client went away; the timer's abort listener goes with it. */
const sleep = (ms: number, signal: AbortSignal) =>
  delay(ms, undefined, { signal }).catch(() => undefined);

/** Deploy verdicts (api.md "Deploy verdicts", docs/verdicts.md). */
export async function verdictRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, config } = ctx;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/deploys/:id/verdict',
    {
      config: { scope: 'read' },
      schemaErrorFormatter: formatValidationError as never,
      schema: {
        tags: ['deploys'],
        summary: 'Whether a deploy made latency worse: pending | pass | fail | inconclusive',
        description:
          'With wait (at most 15m), the request is held until the verdict is no longer pending or the wait ends; ' +
          'no database connection is held meanwhile. window, p50_ratio, p99_ratio and min_count override the ' +
          "service's settings (ONSET_VERDICT_SERVICES) and the defaults. docs/verdicts.md has the method.",
        ...operations['GET /api/v1/deploys/:id/verdict'],
      },
    },
    async (req, reply): Promise<Verdict> => {
      const { waitMs, overrides } = parseQuery(req.query);
      const settingsOf = (service: string | null) =>
        verdictSettings(config.verdictServices, service, overrides);
      const deadline = Date.now() + waitMs;
      // A client that hangs up stops the wait.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      for (;;) {
        const now = Date.now();
        const out = await computeVerdict(pool, req.params.id, settingsOf, now);
        if (!out) throw notFound(`deploy marker ${req.params.id} does not exist`);
        const { verdict, nextLookMs } = out;
        if (verdict.verdict !== 'pending' || now >= deadline || gone.signal.aborted) {
          if (verdict.verdict === 'fail' && !Object.keys(overrides).length)
            await raiseAlert(verdict).catch((err: Error) =>
              req.log.warn({ err: err.message }, 'deploy verdict alert not raised'),
            );
          return verdict;
        }
        // Until the next minute settles; a look already due waits on edge pairing: poll every 2 s.
        const untilLook = (nextLookMs ?? now + POLL_MAX_MS) - now;
        const pause = untilLook > 0 ? Math.min(POLL_MAX_MS, untilLook) : POLL_BEHIND_MS;
        await sleep(Math.min(deadline - now, Math.max(POLL_MIN_MS, pause)), gone.signal);
      }
    },
  );

  /** A failed verdict under the server's own settings is an alert (once per marker). */
  async function raiseAlert(v: Verdict): Promise<void> {
    const m = await getMarker(pool, v.deploy_id);
    if (m) await raiseVerdictAlert(pool, m, v);
  }
}
