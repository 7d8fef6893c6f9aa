/** drill-down.test.ts on a Citus cluster, its assertions unchanged (suite.ts): the trace read and the selection comparison. */
import { citusSuite } from './suite.ts';

await citusSuite('../drill-down.test.ts', () => import('../drill-down.test.ts'));
