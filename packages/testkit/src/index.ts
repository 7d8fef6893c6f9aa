export { createTestDatabase } from './database.ts';
export { startTestServer, type TestServer } from './server.ts';
export {
  startServerProcess,
  type ServerProcess,
  type ServerProcessOptions,
} from './server-process.ts';
export { allowLoopbackWebhooks, LOOPBACK_WEBHOOK_ALLOW } from './egress.ts';
export { exportUntilAcked, type ExportRefusal, type ExportUntilAckedOptions } from './exporter.ts';
