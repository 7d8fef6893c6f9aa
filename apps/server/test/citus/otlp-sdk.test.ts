/** Ingest conformance on a Citus cluster: otlp-sdk.test.ts, its assertions unchanged (README.md). */
import { citusSuite } from './suite.ts';

await citusSuite('../otlp-sdk.test.ts', () => import('../otlp-sdk.test.ts'));
