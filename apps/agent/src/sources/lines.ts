/** Line-by-line reading of a child's output stream. */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

export function onLines(stream: Readable, handle: (line: string) => void): void {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', handle);
}

/** Wait for a child to exit, killing it harder if it does not within `graceMs`. */
export function stopChild(
  child: import('node:child_process').ChildProcess,
  signal: NodeJS.Signals,
  graceMs: number,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}
