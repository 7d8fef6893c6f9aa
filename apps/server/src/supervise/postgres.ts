/**
 * The embedded PostgreSQL as a supervised child of its own (supervisor.ts):
 * started in its own process group, so a terminal's Ctrl-C (SIGINT to the
 * foreground group) reaches the supervisor only, and PostgreSQL stops last,
 * after the agent has flushed and the server has drained. Reports its URL
 * over IPC; SIGTERM stops PostgreSQL and exits. If the supervisor disappears,
 * it stops too.
 */
import { startEmbeddedPostgres } from '../db/embedded.ts';

const dataDir = process.env.ONSET_PG_DATA_DIR;
if (!dataDir || !process.send) {
  console.error('onset: supervise/postgres.ts runs under supervisor.ts');
  process.exit(2);
}
let stopping = false;
const db = await startEmbeddedPostgres({
  dataDir,
  port: Number(process.env.ONSET_EMBEDDED_PG_PORT) || undefined,
});
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await db.stop().catch((e) => console.error('onset: embedded PostgreSQL stop failed', e));
  process.exit(0);
};
for (const s of ['SIGTERM', 'SIGHUP'] as const) process.on(s, () => void stop());
process.on('SIGINT', () => {}); // only the supervisor decides when PostgreSQL goes
process.on('disconnect', () => void stop());
db.onExit(() => {
  if (!stopping) process.exit(1); // PostgreSQL died: the supervisor restarts this child
});
await db.createDatabase('onset').catch(() => {
  /* exists from a previous run */
});
process.send({ type: 'ready', url: db.url('onset'), port: db.port });
