/** ingest-midnight-retry.test.ts on a Citus cluster, its assertions unchanged (suite.ts). */
import { citusSuite } from './suite.ts';

await citusSuite(
  '../ingest-midnight-retry.test.ts',
  () => import('../ingest-midnight-retry.test.ts'),
);
