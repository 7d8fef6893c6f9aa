/** `npm start` rebuilds the web UI only when a source it reads changed (supervise/web-build.ts). */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, rm, writeFile, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { recordWebBuild, webBuildIsFresh, webSourcesHash } from '../src/supervise/web-build.ts';

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function repo(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'onset-webbuild-'));
  dirs.push(root);
  await mkdir(path.join(root, 'apps/web/src/pages'), { recursive: true });
  await mkdir(path.join(root, 'apps/web/dist'), { recursive: true });
  await mkdir(path.join(root, 'packages/core/src'), { recursive: true });
  await writeFile(path.join(root, 'apps/web/src/pages/A.tsx'), 'export const a = 1;\n');
  await writeFile(path.join(root, 'packages/core/src/x.ts'), 'export const x = 1;\n');
  await writeFile(path.join(root, 'apps/web/dist/index.html'), '<!doctype html>');
  return root;
}

describe('web build freshness', () => {
  it('is stale before the first build, fresh after it, stale again after an edit', async () => {
    const root = await repo();
    expect(webBuildIsFresh(root)).toBe(false);
    recordWebBuild(root, webSourcesHash(root));
    expect(webBuildIsFresh(root)).toBe(true);
    await writeFile(path.join(root, 'apps/web/src/pages/A.tsx'), 'export const a = 2;\n');
    expect(webBuildIsFresh(root)).toBe(false);
  });

  it('follows the packages the UI imports, new files, and ignores mtimes', async () => {
    const root = await repo();
    recordWebBuild(root, webSourcesHash(root));
    // A checkout touches every file without changing it: still fresh.
    const later = new Date(Date.now() + 60_000);
    await utimes(path.join(root, 'apps/web/src/pages/A.tsx'), later, later);
    expect(webBuildIsFresh(root)).toBe(true);
    await writeFile(path.join(root, 'packages/core/src/x.ts'), 'export const x = 2;\n');
    expect(webBuildIsFresh(root)).toBe(false);
    recordWebBuild(root, webSourcesHash(root));
    await writeFile(path.join(root, 'apps/web/src/pages/B.tsx'), 'export const b = 1;\n');
    expect(webBuildIsFresh(root)).toBe(false);
  });

  it('is stale when the build itself is gone', async () => {
    const root = await repo();
    recordWebBuild(root, webSourcesHash(root));
    await rm(path.join(root, 'apps/web/dist/index.html'));
    expect(webBuildIsFresh(root)).toBe(false);
  });
});
