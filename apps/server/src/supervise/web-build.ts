/**
 * `npm start` builds the web UI only when its sources changed: a SHA-256 of
 * every file the build reads (apps/web sources and config, and the core and
 * contract packages it imports) is stored beside the build
 * (apps/web/dist/.source-hash) and compared at the next start. Content, not
 * mtimes: a fresh checkout touches every file without changing any.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What the web build reads, relative to the repository root. */
const INPUTS = [
  'apps/web/src',
  'apps/web/index.html',
  'apps/web/vite.config.ts',
  'apps/web/package.json',
  'apps/web/tsconfig.json',
  'packages/core/src',
  'packages/contract/src',
  'package-lock.json',
];

export const HASH_FILE = 'apps/web/dist/.source-hash';

function files(abs: string): string[] {
  if (!existsSync(abs)) return [];
  if (!statSync(abs).isDirectory()) return [abs];
  return readdirSync(abs)
    .sort()
    .flatMap((n) => files(path.join(abs, n)));
}

export function webSourcesHash(root: string): string {
  const h = createHash('sha256');
  for (const input of INPUTS)
    for (const f of files(path.join(root, input))) {
      h.update(path.relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
    }
  return h.digest('hex');
}

/** The build in apps/web/dist was made from exactly the current sources. */
export function webBuildIsFresh(root: string, hash = webSourcesHash(root)): boolean {
  const stamp = path.join(root, HASH_FILE);
  return (
    existsSync(path.join(root, 'apps/web/dist/index.html')) &&
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8').trim() === hash
  );
}

export function recordWebBuild(root: string, hash: string): void {
  writeFileSync(path.join(root, HASH_FILE), hash + '\n');
}
