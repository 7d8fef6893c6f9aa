/**
 * Counts the two-way folder dependencies in apps/server/src: pairs of feature
 * folders A and B where some file in A imports a file in B and some file in B
 * imports a file in A. Files directly under src/ (app.ts, config.ts, context.ts,
 * index.ts: the composition root every feature is wired from) belong to no folder
 * and are left out. Reads the import graph from madge (the same tool as
 * `npm run check:cycles`).
 *
 *   node --import tsx tools/folder-deps/count.ts          # the count and the pairs
 *   node --import tsx tools/folder-deps/count.ts --files  # and the files behind each direction
 */
import madge from 'madge';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const src = path.join(root, 'apps/server/src');

const res = await madge(src, {
  fileExtensions: ['ts'],
  tsConfig: path.join(root, 'tsconfig.madge.json'),
  excludeRegExp: [/\.d\.ts$/],
});
const graph = res.obj() as Record<string, string[]>;

const folderOf = (file: string): string | null => {
  // madge's keys are relative to src; imports leaving src (@onset/*) are ignored.
  if (file.startsWith('..') || path.isAbsolute(file)) return null;
  const parts = file.split('/');
  return parts.length === 1 ? null : parts[0]!;
};

const edges = new Map<string, string[]>(); // "A→B" -> files in A importing B
for (const [file, deps] of Object.entries(graph)) {
  const a = folderOf(file);
  if (!a) continue;
  for (const dep of deps) {
    const b = folderOf(dep);
    if (!b || a === b) continue;
    const key = `${a}→${b}`;
    const list = edges.get(key) ?? [];
    list.push(`${file} → ${dep}`);
    edges.set(key, list);
  }
}

const pairs: string[] = [];
for (const key of edges.keys()) {
  const [a, b] = key.split('→') as [string, string];
  if (a < b && edges.has(`${b}→${a}`)) pairs.push(`${a} ⇄ ${b}`);
}
pairs.sort();
const showFiles = process.argv.includes('--files');
for (const p of pairs) {
  console.log(p);
  if (showFiles) {
    const [a, b] = p.split(' ⇄ ') as [string, string];
    for (const f of [...edges.get(`${a}→${b}`)!, ...edges.get(`${b}→${a}`)!])
      console.log(`    ${f}`);
  }
}
console.log(`two-way folder dependencies in apps/server/src: ${pairs.length}`);
