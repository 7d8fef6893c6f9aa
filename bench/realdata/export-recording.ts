/**
 * node --import tsx bench/realdata/export-recording.ts --db URL --out FILE [--about TEXT]
 *
 * Reads every series of a running Onset's database the way the detection
 * pass reads them (readPoints over the per-minute histograms, all hosts
 * merged) and writes them as a recording (recording.ts).
 */
import { parseArgs } from 'node:util';
import { createPool, readPoints } from '@onset/server/internals';
import { writeRecording, type RecordedSeries } from './recording.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    out: { type: 'string' },
    about: { type: 'string', default: '' },
  },
});
if (!args.db || !args.out) {
  console.error('usage: export-recording.ts --db URL --out FILE [--about TEXT]');
  process.exit(2);
}
const pool = createPool(args.db, 2);
const client = await pool.connect();
try {
  const { rows: series } = await client.query<{
    id: string;
    service: string;
    op: string;
    view: string;
    name: string;
  }>('SELECT id, service, op, view, name FROM series ORDER BY id');
  const { rows: span } = await client.query<{ lo: Date; hi: Date }>(
    'SELECT min(minute) AS lo, max(minute) AS hi FROM histograms',
  );
  const fromMs = span[0]!.lo.getTime();
  // The last minute may be partial (the recorder stopped in it): left out, as the pass would.
  const toMs = span[0]!.hi.getTime();
  const points = await readPoints(client, {
    seriesIds: series.map((s) => Number(s.id)),
    fromMs,
    toMs,
    table: 'minute',
  });
  let paths = 0;
  const names = new Map<string, string>();
  for (const s of series) names.set(s.id, s.name.startsWith('/') ? `path#${++paths}` : s.name);
  const label = (s: { service: string; op: string; view: string; id: string }) =>
    `${s.service} ${s.op} ${s.view} ${names.get(s.id)}`;
  const out: RecordedSeries[] = [];
  for (const s of series) {
    const ps = points.get(Number(s.id));
    if (!ps?.length) continue;
    const t0 = Math.round(ps[0]!.t / 60_000);
    out.push({
      service: s.service,
      op: s.op,
      view: s.view,
      name: names.get(s.id)!,
      t0,
      points: ps.map((p) => [
        Math.round(p.t / 60_000) - t0,
        p.count,
        Math.round(p.p50 * 10) / 10,
        Math.round(p.p99 * 10) / 10,
      ]),
    });
  }
  // What the recording server's own passes opened, to compare the replay with.
  const { rows: opened } = await client.query<{
    id: string;
    service: string;
    op: string;
    view: string;
    onset: Date;
    metric: string;
  }>(
    `SELECT s.id, s.service, s.op, s.view, r.onset, r.metric
       FROM regressions r JOIN series s ON s.id = r.series_id ORDER BY r.onset`,
  );
  await writeRecording(args.out, {
    about: args.about!,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    live: opened.map((r) => ({ series: label(r), onset: r.onset.toISOString(), metric: r.metric })),
    series: out,
  });
  const n = out.reduce((a, s) => a + s.points.length, 0);
  console.log(`${out.length} series, ${n} minutes with data, ${args.out}`);
} finally {
  client.release();
  await pool.end();
}
