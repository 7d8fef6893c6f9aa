/** ingest-group-commit.test.ts on a Citus cluster, its assertions unchanged (suite.ts). */
import { citusSuite } from './suite.ts';

await citusSuite('../ingest-group-commit.test.ts', () => import('../ingest-group-commit.test.ts'));
