/**
 * schemathesis from PyPI in a virtualenv the test makes itself, cached under
 * node_modules/.cache keyed by the pinned requirements, so only the first
 * run pays for the install. Any failure (no python3, no venv module, PyPI
 * unreachable) throws: CI has registry access, and a fuzz test that skips
 * itself quietly would prove nothing.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const REQUIREMENTS = path.join(HERE, 'requirements.txt');
const WORKAROUND = path.join(HERE, 'py311_ast_workaround.py');
const CACHE = path.resolve(HERE, '../../../../node_modules/.cache/onset-schemathesis');

/** The `st` executable of a venv holding exactly requirements.txt; made on first use. */
export async function schemathesisBin(): Promise<string> {
  const reqs = await readFile(REQUIREMENTS, 'utf8');
  const workaround = await readFile(WORKAROUND, 'utf8');
  const key = createHash('sha256').update(reqs).update(workaround).digest('hex').slice(0, 12);
  const venv = path.join(CACHE, `venv-${key}`);
  const st = path.join(venv, 'bin', 'st');
  // The marker is written last: a half-made venv (interrupted install) is rebuilt.
  if (existsSync(path.join(venv, '.complete'))) return st;

  await rm(venv, { recursive: true, force: true });
  await mkdir(CACHE, { recursive: true });
  const step = async (file: string, args: string[], what: string) => {
    try {
      await run(file, args, { maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new Error(`schemathesis venv: ${what} failed: ${err.stderr || err.message}`);
    }
  };
  await step(
    'python3',
    ['-m', 'venv', venv],
    'python3 -m venv (on Debian: apt-get install python3-venv)',
  );
  await step(
    path.join(venv, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', '-r', REQUIREMENTS],
    'pip install from PyPI',
  );
  // A .pth line runs at interpreter start: the workaround is active for every `st` run.
  const { stdout } = await run(path.join(venv, 'bin', 'python'), [
    '-c',
    'import sysconfig; print(sysconfig.get_paths()["purelib"])',
  ]);
  const site = stdout.trim();
  await writeFile(path.join(site, 'onset_py311_ast_workaround.py'), workaround);
  await writeFile(
    path.join(site, 'onset_py311_ast_workaround.pth'),
    'import onset_py311_ast_workaround\n',
  );
  await writeFile(path.join(venv, '.complete'), reqs);
  return st;
}
