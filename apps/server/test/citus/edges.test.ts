/** edges.test.ts on a Citus cluster, its assertions unchanged (suite.ts). */
import { citusSuite } from './suite.ts';

await citusSuite('../edges.test.ts', () => import('../edges.test.ts'));
