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

/** hostCpuRise over minutes -30..`to` at `level`, seen through `through` minutes after the onset. */
function riseOver(level: (m: number) => number, to = 20, through = to, from = -30) {
  return hostCpuRise(minutes(from, to, level), ONSET, ONSET + through * MIN);
}

describe('hostCpuRise', () => {
  it('finds steal that rose at the onset and stayed, with the levels on either side', () => {
    const r = riseOver((m) => (m < 0 ? 12 + (-m % 3) : 140 + (m % 5)));
    expect(r).toMatchObject({ beforeMsPerS: 13, afterMsPerS: 142, minutesBefore: 30 });
  });

  it('is null on steady steal, however high', () => {
    expect(riseOver(() => 300)).toBeNull();
  });

  it('is null when the rise is small in CPU (under 3 % of the wanted time) or not a doubling', () => {
    // 2 -> 25 ms/s: ×12 but 2.3 % of the time wanted.
    expect(riseOver((m) => (m < 0 ? 2 : 25))).toBeNull();
    // 100 -> 160 ms/s: +6 % but ×1.6.
    expect(riseOver((m) => (m < 0 ? 100 : 160))).toBeNull();
  });

  it('is null when a burst of steal came and went while the step stayed', () => {
    const burst = (m: number) => (m >= 0 && m < 4 ? 200 : 10);
    expect(riseOver(burst)).toBeNull();
  });

  it('does not read past what the detector saw', () => {
    // Steal rises ten minutes after the onset: through the onset + 8 min it had not.
    const late = (m: number) => (m < 10 ? 10 : 200);
    expect(riseOver(late, 30, 8)).toBeNull();
  });

  it('is null with too few minutes to tell (an agent that just started)', () => {
    const step = (m: number) => (m < 0 ? 10 : 200);
    expect(riseOver(step, 10, 10, -3)).toBeNull();
    expect(riseOver(step, 1)).toBeNull();
  });
});
