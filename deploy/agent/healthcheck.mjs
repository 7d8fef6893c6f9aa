// Container health check for the agent, which serves no HTTP: healthy while
// an onset-agent process runs. Reads /proc directly (the slim image has no
// procps); works in the container's pid namespace and with pid: host.
import { readdirSync, readFileSync } from 'node:fs';

const self = String(process.pid);
const running = readdirSync('/proc').some((pid) => {
  if (!/^\d+$/.test(pid) || pid === self) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .some((arg) => arg.endsWith('onset-agent.js') || arg.endsWith('agent/src/main.ts'));
  } catch {
    return false; // the process exited while we looked
  }
});
if (!running) console.error('agent healthcheck: no onset-agent process');
process.exit(running ? 0 : 1);
