/**
 * A Flagger webhook gate on deploy verdicts (api.md "Verdict gates"): Flagger
 * POSTs its documented payload and reads any non-2xx answer as "no". The
 * verdict is the GET route's (computeVerdict, the service's settings); this
 * only picks the marker and maps the verdict to 200 (open) or 412 (shut).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations, type FlaggerWebhook, type Verdict, type VerdictGate } from '@onset/contract';
import type { AppContext } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { listMarkers } from '../deploys/queries.ts';
import { formatValidationError } from '../deploys/schema.ts';
import { computeVerdict, verdictSettings } from './engine.ts';

/** Does this verdict open a gate that waits for `expect`? */
export function gateOpens(
  verdict: Verdict['verdict'],
  expect: 'pass' | 'fail',
  inconclusive: 'pass' | 'fail' | 'hold',
): boolean {
  const read = verdict === 'inconclusive' ? inconclusive : verdict;
  return read === expect;
}

export async function flaggerGateRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, config } = ctx;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.post(
    '/verdicts/flagger',
    {
      config: { scope: 'read' },
      bodyLimit: 64 * 1024,
      schemaErrorFormatter: formatValidationError as never,
      schema: {
        tags: ['deploys'],
        summary:
          "A Flagger webhook gate: 200 once the deploy's verdict is what it waits for, else 412",
        description:
          'Takes the payload a Flagger webhook sends. The marker is metadata.deploy_id, else the newest marker ' +
          'of metadata.service (default: the canary name) in metadata.environment. metadata.expect pass ' +
          '(default) opens on a pass, fail (a rollback hook) on a fail; metadata.inconclusive pass|fail|hold.',
        ...operations['POST /api/v1/verdicts/flagger'],
      },
    },
    async (req, reply): Promise<VerdictGate> => {
      const body: FlaggerWebhook = req.body;
      const meta = body.metadata ?? {};
      let id = meta.deploy_id;
      if (!id) {
        const service = meta.service || body.name;
        const [m] = await listMarkers(pool, {
          service,
          environment: meta.environment || undefined,
          toMs: Date.now(),
          limit: 1,
        });
        if (!m)
          throw notFound(
            `no deploy marker of service ${service}${meta.environment ? ` in ${meta.environment}` : ''}`,
          );
        id = m.id;
      }
      const out = await computeVerdict(
        pool,
        id,
        (service) => verdictSettings(config.verdictServices, service, {}),
        Date.now(),
      );
      if (!out) throw notFound(`deploy marker ${id} does not exist`);
      const expect = meta.expect ?? 'pass';
      const open = gateOpens(out.verdict.verdict, expect, meta.inconclusive ?? 'hold');
      reply.code(open ? 200 : 412);
      return {
        open,
        deploy_id: out.verdict.deploy_id,
        verdict: out.verdict.verdict,
        reason: out.verdict.reason,
        expect,
      };
    },
  );
}
