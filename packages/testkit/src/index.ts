export { createTestDatabase } from './database.ts';
export { startTestServer, type TestServer } from './server.ts';
