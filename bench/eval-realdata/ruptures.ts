/**
 * ruptures (PyPI) in a virtualenv cached under node_modules/.cache, keyed by
 * the pinned requirements and the runner, like the schemathesis test's
 * (apps/server/test/schemathesis/venv.ts). Returns null with a reason when
 * python3, venv or PyPI is unavailable: the eval then prints the row as
 * unavailable instead of failing.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CACHE = path.resolve(HERE, '../../node_modules/.cache/onset-ruptures');
const REQUIREMENTS = path.join(HERE, 'requirements.txt');
const RUNNER = path.join(HERE, 'ruptures_runner.py');

export interface RupturesAnswer {
  pelt: number[];
  binseg: number[];
  /** PELT with every change under `minRatio` merged away (ruptures_runner.py). */
  pelt_min_ratio: number[];
  /** PELT with a line (level and slope) per segment on the noise-scaled logs (ruptures_runner.py). */
  pelt_trend: number[];
  /** pelt_trend's change points where the lines either side jump by at least `minRatio`. */
  pelt_trend_min_ratio: number[];
}

async function venvPython(): Promise<string | { error: string }> {
  const reqs = await readFile(REQUIREMENTS, 'utf8');
  const key = createHash('sha256').update(reqs).digest('hex').slice(0, 12);
  const venv = path.join(CACHE, `venv-${key}`);
  const py = path.join(venv, 'bin', 'python');
  if (existsSync(path.join(venv, '.complete'))) return py;
  await rm(venv, { recursive: true, force: true });
  await mkdir(CACHE, { recursive: true });
  const step = (file: string, args: string[], what: string): string | null => {
    const r = spawnSync(file, args, { encoding: 'utf8', timeout: 300_000 });
    return r.status === 0
      ? null
      : `${what} failed: ${(r.stderr || r.error?.message || '').trim().slice(-400)}`;
  };
  const err =
    step('python3', ['-m', 'venv', venv], 'python3 -m venv') ??
    step(
      path.join(venv, 'bin', 'pip'),
      ['install', '--quiet', '--disable-pip-version-check', '-r', REQUIREMENTS],
      'pip install ruptures',
    );
  if (err) return { error: err };
  await writeFile(path.join(venv, '.complete'), reqs);
  return py;
}

export async function runRuptures(
  series: ReadonlyArray<{ name: string; values: ReadonlyArray<number | null> }>,
  minRatio: number,
): Promise<Map<string, RupturesAnswer> | { error: string }> {
  const py = await venvPython();
  if (typeof py !== 'string') return py;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'onset-eval-ruptures-'));
  try {
    const input = path.join(dir, 'in.jsonl');
    const output = path.join(dir, 'out.jsonl');
    await writeFile(input, series.map((s) => JSON.stringify(s)).join('\n') + '\n');
    const r = spawnSync(py, [RUNNER, input, output, String(minRatio)], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (r.status !== 0) return { error: `ruptures runner failed: ${r.stderr.trim().slice(-400)}` };
    const out = new Map<string, RupturesAnswer>();
    for (const line of (await readFile(output, 'utf8')).split('\n').filter(Boolean)) {
      const { name, ...a } = JSON.parse(line) as RupturesAnswer & { name: string };
      out.set(name, a);
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
