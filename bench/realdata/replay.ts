/**
 * npm run eval:recording [-- FILE...]
 *
 * Onset's detector, in the server's configuration for each series' view
 * (detectOptionsFor), over real recordings of this machine in which nobody
 * made a change (apps/server/test/fixtures/recordings/, README there): every
 * regression it would open is a false alarm. Counts them and the
 * improvements per series-day (replayRecording in recording.ts). Writes
 * bench/results/eval-recording.json.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeResult } from '../lib/harness.ts';
import { readRecording, replayRecording } from './recording.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIR = path.resolve(HERE, '../../apps/server/test/fixtures/recordings');
/** Issue 30's bar: fewer than one false regression a day per 50 series. */
const BAR_PER_SERIES_DAY = 0.02;

const files = process.argv.slice(2).length
  ? process.argv.slice(2)
  : (await readdir(DIR).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.json.gz'))
      .map((f) => path.join(DIR, f));
if (!files.length) {
  console.error(`no recordings (*.json.gz) in ${DIR}; pass files as arguments`);
  process.exit(2);
}

const totals = {
  series: 0,
  minutes: 0,
  seriesDays: 0,
  regressions: 0,
  confirmed: 0,
  improvements: 0,
  loadRate: 0,
  gapUnfelt: 0,
  joined: 0,
  held: 0,
  verdictRises: 0,
  verdictOther: 0,
};
const opened: Array<{
  file: string;
  series: string;
  onset: string;
  metric: string;
  ratio: number;
  confirmed: boolean;
}> = [];
for (const file of files) {
  const rec = await readRecording(file);
  const r = replayRecording(rec);
  const hours = (Date.parse(rec.to) - Date.parse(rec.from)) / 3_600_000;
  console.log(
    `${path.basename(file)}: ${rec.from} .. ${rec.to} (${hours.toFixed(2)} h), ${r.series} series, ${r.minutes} minutes with data, ${r.seriesDays.toFixed(2)} series-days: ${r.regressions.length} regressions opened (${(r.regressions.length / r.seriesDays).toFixed(4)} per series-day), ${r.improvements} improvements, ${r.loadRate} steps up on load-rate series (never opened), ${r.gapUnfelt} on gap views their caller did not feel, ${r.joined} joined a regression, ${r.held} held for host contention`,
  );
  const replayed = new Set(r.regressions.map((o) => `${o.series} ${o.onset}`));
  const live = rec.live ?? [];
  const same = live.filter((o) => replayed.has(`${o.series} ${o.onset}`)).length;
  console.log(
    `  the recording server's own passes opened ${live.length} (${same} of them also in this replay)`,
  );
  totals.series += r.series;
  totals.minutes += r.minutes;
  totals.seriesDays += r.seriesDays;
  totals.regressions += r.regressions.length;
  totals.improvements += r.improvements;
  totals.loadRate += r.loadRate;
  totals.gapUnfelt += r.gapUnfelt;
  totals.joined += r.joined;
  totals.held += r.held;
  totals.confirmed += r.regressions.filter((o) => o.confirmed).length;
  totals.verdictRises += r.verdict.rises;
  totals.verdictOther += r.verdict.other;
  opened.push(...r.regressions.map((o) => ({ file: path.basename(file), ...o })));
}
for (const o of opened)
  console.log(
    `  false regression: ${o.series} at ${o.onset}, ${o.metric} ×${o.ratio.toFixed(2)} (${o.confirmed ? 'confirmed' : 'not confirmed'} by the segmentation)`,
  );
const rate = totals.regressions / totals.seriesDays;
console.log(
  `all: ${totals.regressions} false regressions in ${totals.seriesDays.toFixed(2)} series-days = ${rate.toFixed(4)} per series-day (bar < ${BAR_PER_SERIES_DAY}: ${rate < BAR_PER_SERIES_DAY ? 'met' : 'NOT met'}); ${totals.improvements} improvements (never paged), ${totals.loadRate} steps up on load-rate series (context, never opened alone), ${totals.gapUnfelt} on gap views their caller did not feel, ${totals.joined} joined, ${totals.held} held for host contention`,
);
console.log(
  `retrospective verdict (never paged): ${totals.confirmed} of the ${totals.regressions} confirmed by the segmentation; its own changes ${totals.verdictRises} rises of at least minRatio and ${totals.verdictOther} others (${((totals.verdictRises + totals.verdictOther) / totals.seriesDays).toFixed(2)} per series-day)`,
);
const out = await writeResult('eval-recording', { files, ...totals, rate, opened });
console.log(`wrote ${out}`);
