/** Start the Python helpers and wait for their lines. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface Helper {
  child: ChildProcess;
  /** Resolves with the next stdout line equal to `line`; rejects if the process exits first. */
  waitLine(line: string, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

export function startHelper(script: string, args: string[], env?: NodeJS.ProcessEnv): Helper {
  const child = spawn('python3', [path.join(HERE, script), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: env ? { ...process.env, ...env } : undefined,
  });
  const lines: string[] = [];
  const waiters: { line: string; resolve: () => void }[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  createInterface({ input: child.stdout! }).on('line', (l) => {
    lines.push(l);
    for (const w of waiters.filter((w) => w.line === l)) w.resolve();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    waitLine(line, timeoutMs = 30_000) {
      if (lines.includes(line)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`${script}: no "${line}" within ${timeoutMs} ms; stderr: ${stderr}`)),
          timeoutMs,
        );
        waiters.push({ line, resolve: () => (clearTimeout(timer), resolve()) });
        void exited.then((code) => {
          if (!lines.includes(line)) {
            clearTimeout(timer);
            reject(new Error(`${script} exited with ${code} before "${line}"; stderr: ${stderr}`));
          }
        });
      });
    },
  };
}

/** Run a helper to completion ("done"), failing with its stderr otherwise. */
export async function runHelper(script: string, args: string[], timeoutMs = 60_000): Promise<void> {
  const h = startHelper(script, args);
  await h.waitLine('done', timeoutMs);
  await h.exited;
}
