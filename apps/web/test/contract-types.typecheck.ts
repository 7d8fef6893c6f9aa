/**
 * Compile-time test (run by `npm run typecheck`, never executed): the web's reads and writes
 * are typed from the contract's `operations`, so using an answer as the wrong shape does not
 * compile. Each `@ts-expect-error` line must fail to type-check; if a change made it compile
 * (an operation answering another shape, a hook typed by hand again), tsc reports the unused
 * directive and the typecheck fails.
 */
import type { OpResponse, Regression, Series, SeriesList, Slo } from '@onset/contract';
import { request } from '../src/api/client.ts';
import { useOp } from '../src/api/useOp.ts';
import { useRegression, useRegressionAction } from '../src/features/regressions/api.ts';
import { useSlos } from '../src/features/slos/api.ts';
import { useQuantiles } from '../src/features/explorer/api.ts';

export function WebContractTypes(): unknown[] {
  const regression = useRegression('1').data!;
  const right: Regression = regression;
  // @ts-expect-error GET /api/v1/regressions/:id answers a regression, not a series
  const wrong: Series = regression;
  // @ts-expect-error ratio_p50 is a number
  const ratio: string = regression.ratio_p50;
  // @ts-expect-error a regression has no `budget_remaining`
  const budget = regression.budget_remaining;

  const slos: Slo[] = useSlos().data!;
  // @ts-expect-error the SLO list answer is an envelope ({slos}), not an array
  const raw: Slo[] = useOp('GET /api/v1/slos', {}).data!;
  // @ts-expect-error an operation's answer is its own schema's: the SLO list is no series list
  const other: SeriesList = {} as OpResponse<'GET /api/v1/slos'>;
  // @ts-expect-error the quantiles hook asks for columns: there are no points
  const points = useQuantiles('1', { range: { from: 'now-1h', to: 'now' } }).data!.points;

  // @ts-expect-error a path parameter is required
  const noParams = request('GET /api/v1/slos/:id', {});
  // @ts-expect-error a silence's comment is a string
  const badBody = request('POST /api/v1/silences', { body: { comment: 1, duration: '1h' } });
  const action = useRegressionAction();
  // @ts-expect-error the actions are ack, resolve and reopen
  action.mutate({ id: '1', action: 'delete' });

  return [right, wrong, ratio, budget, slos, raw, other, points, noParams, badBody];
}
