/**
 * Whether a step's hosts lost CPU to the hypervisor at its onset
 * (docs/regressions.md "Held for host contention").
 *
 * On a shared virtual machine the hypervisor gives the host's CPUs to other
 * guests for minutes at a time. Every latency on the host then steps with it
 * (tails most: a task descheduled mid-call waits milliseconds), although no
 * deploy changed anything the host's owners control. The agent reports, each
 * minute, the share of the CPU time the host's tasks wanted that was stolen
 * (`host` series `cpu-steal`, in ms per second wanted). A step with no deploy
 * to explain it, whose onset is where that share rose and stayed up, is held
 * back instead of opened as a regression.
 *
 * Steal, not CPU pressure: a service that regresses by burning more CPU raises
 * its own host's pressure, so pressure cannot tell cause from effect; the share
 * of wanted time the hypervisor withheld is set from outside the guest.
 */
import { median } from './detect/stats.ts';

const MIN = 60_000;

/** How far before the onset the host's level is read. */
export const HOST_CPU_BEFORE_MS = 30 * MIN;
/** Minutes of host data needed before the onset, and from it on. */
export const HOST_CPU_MIN_BEFORE = 5;
export const HOST_CPU_MIN_AFTER = 2;
/** A rise must add at least this much stolen time (ms per second wanted: 3 % of it)… */
export const HOST_CPU_RISE_MS_PER_S = 30;
/** …and at least double the level before (read as at least this much, so 1 → 3 is no doubling). */
export const HOST_CPU_RISE_RATIO = 2;
export const HOST_CPU_LEVEL_FLOOR_MS_PER_S = 10;

/** One minute of a host's stolen CPU share (the mean over the host's agents). */
export interface HostCpuMinute {
  minuteMs: number;
  stealMsPerS: number;
}

/** A rise of stolen CPU at an onset: the median level before it and from it on. */
export interface HostCpuRise {
  beforeMsPerS: number;
  afterMsPerS: number;
  minutesBefore: number;
  minutesAfter: number;
}

/**
 * The rise of stolen CPU at `onsetMs`, reading the minutes before it (up to
 * HOST_CPU_BEFORE_MS) and from it until `throughMs`, or null when there is no
 * such rise or too few minutes to tell. Medians, so one odd minute neither
 * makes nor hides a rise; "from it on" is the whole span the detector saw the
 * step over, so a burst of steal that came and went does not explain a step
 * that stayed.
 */
export function hostCpuRise(
  minutes: readonly HostCpuMinute[],
  onsetMs: number,
  throughMs: number,
): HostCpuRise | null {
  const before: number[] = [];
  const after: number[] = [];
  for (const m of minutes) {
    if (!Number.isFinite(m.stealMsPerS)) continue;
    if (m.minuteMs >= onsetMs - HOST_CPU_BEFORE_MS && m.minuteMs < onsetMs)
      before.push(m.stealMsPerS);
    else if (m.minuteMs >= onsetMs && m.minuteMs < throughMs) after.push(m.stealMsPerS);
  }
  if (before.length < HOST_CPU_MIN_BEFORE || after.length < HOST_CPU_MIN_AFTER) return null;
  const b = median(before);
  const a = median(after);
  const rose =
    a - b >= HOST_CPU_RISE_MS_PER_S &&
    a >= HOST_CPU_RISE_RATIO * Math.max(b, HOST_CPU_LEVEL_FLOOR_MS_PER_S);
  return rose
    ? { beforeMsPerS: b, afterMsPerS: a, minutesBefore: before.length, minutesAfter: after.length }
    : null;
}
