import { describe, expect, it } from 'vitest';
import { hostCpuRise, type HostCpuMinute } from '../src/host-contention.ts';

const MIN = 60_000;
const ONSET = 1_800_000_000_000;

/** Minutes from `from` to `to` (exclusive, minutes from the onset) at a level given per minute. */
function minutes(from: number, to: number, level: (m: number) => number): HostCpuMinute[] {
  const out: HostCpuMinute[] = [];
  for (let m = from; m < to; m++) out.push({ minuteMs: ONSET + m * MIN, stealMsPerS: level(m) });
  return out;
}

describe('hostCpuRise', () => {
  it('finds steal that rose at the onset and stayed, with the levels on either side', () => {
    const r = hostCpuRise(
      minutes(-30, 20, (m) => (m < 0 ? 12 + (-m % 3) : 140 + (m % 5))),
      ONSET,
      ONSET + 20 * MIN,
    );
    expect(r).toMatchObject({ beforeMsPerS: 13, afterMsPerS: 142, minutesBefore: 30 });
  });

  it('is null on steady steal, however high', () => {
    expect(
      hostCpuRise(
        minutes(-30, 20, () => 300),
        ONSET,
        ONSET + 20 * MIN,
      ),
    ).toBeNull();
  });

  it('is null when the rise is small in CPU (under 3 % of the wanted time) or not a doubling', () => {
    // 2 -> 25 ms/s: ×12 but 2.3 % of the time wanted.
    expect(
      hostCpuRise(
        minutes(-30, 20, (m) => (m < 0 ? 2 : 25)),
        ONSET,
        ONSET + 20 * MIN,
      ),
    ).toBeNull();
    // 100 -> 160 ms/s: +6 % but ×1.6.
    expect(
      hostCpuRise(
        minutes(-30, 20, (m) => (m < 0 ? 100 : 160)),
        ONSET,
        ONSET + 20 * MIN,
      ),
    ).toBeNull();
  });

  it('is null when a burst of steal came and went while the step stayed', () => {
    const burst = (m: number) => (m >= 0 && m < 4 ? 200 : 10);
    expect(hostCpuRise(minutes(-30, 20, burst), ONSET, ONSET + 20 * MIN)).toBeNull();
  });

  it('does not read past what the detector saw', () => {
    // Steal rises ten minutes after the onset: through the onset + 8 min it had not.
    const late = (m: number) => (m < 10 ? 10 : 200);
    expect(hostCpuRise(minutes(-30, 30, late), ONSET, ONSET + 8 * MIN)).toBeNull();
  });

  it('is null with too few minutes to tell (an agent that just started)', () => {
    expect(
      hostCpuRise(
        minutes(-3, 10, (m) => (m < 0 ? 10 : 200)),
        ONSET,
        ONSET + 10 * MIN,
      ),
    ).toBeNull();
    expect(
      hostCpuRise(
        minutes(-30, 1, (m) => (m < 0 ? 10 : 200)),
        ONSET,
        ONSET + MIN,
      ),
    ).toBeNull();
  });
});
