/**
 * bench/ingest/decode-ab.ts: the server's CPU per span for the synchronous half
 * of trace ingest (decode -> normalise -> COPY rows -> folds merged per 8
 * exports -> histogram and durations COPY buffers), on the realistic load's
 * bodies, for two checkouts loaded into ONE process and run alternately, so a
 * shared, busy machine slows both alike. No HTTP, no PostgreSQL: compare with
 * `npm run bench:ingest` for those.
 *
 *   node --import tsx bench/ingest/decode-ab.ts <checkout A> <checkout B> [alternations]
 *
 * Prints µs of CPU per span (min and median over the alternations) and B/A.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const roots = process.argv.slice(2, 4).map((r) => path.resolve(r));
if (roots.length !== 2)
  throw new Error('usage: decode-ab.ts <checkout A> <checkout B> [alternations]');
const ALTERNATIONS = Number(process.argv[4] ?? 16);
const BODIES = 800;
const limits = {
  maxDurationMs: 86_400_000,
  maxAttributes: 128,
  oldestMs: Date.now() - 86_400_000,
  newestMs: Date.now() + 3_600_000,
};

const load = (root: string, file: string) => import(pathToFileURL(path.join(root, file)).href);

/** A runner of `n` bodies through one checkout's code (its own module instances). */
async function runner(root: string): Promise<(n: number) => void> {
  const { templates } = await load(root, 'bench/ingest/loads.ts');
  const { decodeTraces, fillIds } = await load(root, 'apps/server/src/otlp/decode-traces.ts');
  const folding = await load(root, 'apps/server/src/otlp/span-folds.ts');
  const tpls = templates('realistic', 200);
  const idOf = new Map<string, number>();
  let next = 0;
  let sent = 0;
  // One export as the store step sees it: ids from a registry-like map, folds with their ids.
  function exportFolds(i: number) {
    const t = tpls[i % tpls.length];
    const buf = Buffer.from(t.buf);
    for (const at of t.traceAt) buf.writeUInt32BE(i, at);
    for (const at of t.spanAt) buf.writeUInt32BE(i, at);
    const d = decodeTraces(buf, 'protobuf', limits);
    if (!d.ok) throw new Error(`refused: ${d.message}`);
    const ids = d.groupKeys.map((key: string) => {
      let s = idOf.get(key);
      if (s === undefined) idOf.set(key, (s = ++next));
      return [s, s + 1_000_000] as const;
    });
    fillIds(d, ids);
    if (folding.FoldSum)
      return { ids, group: d.rowGroup, minuteMs: d.rowMinuteMs, durationUs: d.rowDurationUs };
    // A checkout from before FoldSum (d0db60c and earlier) folded each export while decoding.
    return d.folds.map((f: { g: number }) => ({
      ...f,
      seriesId: ids[f.g]![0],
      resourceId: ids[f.g]![1],
    }));
  }
  return (n) => {
    for (let i = 0; i < n; i += 8) {
      const group = Array.from({ length: 8 }, (_, j) => exportFolds(sent + i + j));
      if (folding.FoldSum) {
        folding.FoldSum.of(group).rows('2026-12-02');
      } else {
        const merged = folding.mergeFolds(group);
        folding.histogramRows(merged);
        folding.durationRows(merged, '2026-12-02');
      }
    }
    sent += n;
  };
}

const runs = [await runner(roots[0]!), await runner(roots[1]!)];
for (const run of runs) run(3000); // warm the JIT
const us: number[][] = [[], []];
for (let a = 0; a < ALTERNATIONS; a++)
  for (const k of [0, 1]) {
    const from = process.cpuUsage();
    runs[k]!(BODIES);
    const used = process.cpuUsage(from);
    us[k]!.push((used.user + used.system) / (BODIES * 200));
  }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const k of [0, 1])
  console.log(
    `${roots[k]}: ${Math.min(...us[k]!).toFixed(2)} µs/span min, ${median(us[k]!).toFixed(2)} median`,
  );
console.log(`B/A (median): ${(median(us[1]!) / median(us[0]!)).toFixed(3)}`);
