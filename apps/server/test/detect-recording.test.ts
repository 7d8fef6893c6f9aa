/**
 * Real recordings of this machine in which nobody made a change
 * (fixtures/recordings/, README there; bench/realdata): every regression the
 * detector opens on them is a false alarm. The detector, in the server's
 * configuration per view, must open none beyond what the recording
 * server's own passes opened (stored in the recording): a detector change
 * that adds a false alarm on real quiet data fails here, one that removes
 * one passes (then re-measure with `npm run eval:recording`).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readRecording, replayRecording } from '../../../bench/realdata/recording.ts';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/recordings');
const files = readdirSync(DIR).filter((f) => f.endsWith('.json.gz'));

describe('detector on real recordings without changes', () => {
  it('has recordings to replay', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  for (const file of files)
    it(`${file}: opens no regression the recording's own passes did not`, async () => {
      const rec = await readRecording(path.join(DIR, file));
      const r = replayRecording(rec);
      expect(r.series).toBeGreaterThan(100);
      const live = new Set(rec.live.map((o) => `${o.series} ${o.onset}`));
      const extra = r.regressions.filter((o) => !live.has(`${o.series} ${o.onset}`));
      expect(extra, `new false regressions: ${JSON.stringify(extra)}`).toEqual([]);
      expect(r.regressions.length).toBeLessThanOrEqual(rec.live.length);
      // Issue 30's bar: at most one false regression a day per 50 series.
      expect(r.regressions.length / r.seriesDays).toBeLessThanOrEqual(0.02);
    });
});
