/** evidence.test.ts on a Citus cluster, its assertions unchanged (suite.ts). */
import { citusSuite } from './suite.ts';

await citusSuite('../evidence.test.ts', () => import('../evidence.test.ts'));
