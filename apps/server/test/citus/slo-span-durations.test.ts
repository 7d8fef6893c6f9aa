/** slo-span-durations.test.ts on a Citus cluster, its assertions unchanged (suite.ts). */
import { citusSuite } from './suite.ts';

await citusSuite('../slo-span-durations.test.ts', () => import('../slo-span-durations.test.ts'));
