/** regress.test.ts on a Citus cluster, its assertions unchanged (suite.ts). */
import { citusSuite } from './suite.ts';

await citusSuite('../regress.test.ts', () => import('../regress.test.ts'));
