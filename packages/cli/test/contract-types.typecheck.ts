/**
 * Compile-time test (run by `npm run typecheck`, never executed): the CLI's requests are typed
 * from the contract's `operations`. Each `@ts-expect-error` line must fail to type-check; if a
 * change made it compile, tsc reports the unused directive and the typecheck fails.
 */
import type { Deploy, OpArgs, Verdict } from '@onset/contract';
import { postMarker, requestOp, type ClientOptions } from '../src/deploy/client.ts';

export async function cliContractTypes(opts: ClientOptions): Promise<unknown[]> {
  const { marker } = await postMarker({ kind: 'code', at: 'now', external_id: 'x' }, opts);
  const right: Deploy = marker;
  // @ts-expect-error POST /api/v1/deploys answers the stored marker, not a verdict
  const wrong: Verdict = marker;
  // @ts-expect-error a marker's hosts are a list of strings
  const hosts: string = marker.hosts;

  const verdict = await requestOp(
    'GET /api/v1/deploys/:id/verdict',
    { params: { id: marker.id } },
    { what: 'the verdict' },
    opts,
  );
  const outcome: Verdict['verdict'] = verdict.body.verdict;
  // @ts-expect-error a verdict is no marker list
  const list = verdict.body.deploys;
  // @ts-expect-error a marker's hosts are a list
  await postMarker({ kind: 'code', hosts: 'web-1', at: 'now', external_id: 'y' }, opts);
  const args: OpArgs<'GET /api/v1/deploys/:id/verdict'> = {
    params: { id: '1' },
    // @ts-expect-error the verdict's query has no `limit`
    query: { limit: 5 },
  };

  return [right, wrong, hosts, outcome, list, args];
}
