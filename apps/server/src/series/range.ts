import { parseDuration } from '@onset/contract';
import { badRequest } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';

function autoStepMs(rangeMs: number): number {
  const candidates = [
    60_000,
    300_000,
    600_000,
    1_800_000,
    3_600_000,
    3 * 3_600_000,
    6 * 3_600_000,
    86_400_000,
  ];
  return candidates.find((s) => rangeMs / s <= 360) ?? 86_400_000;
}

export interface StepRange {
  fromMs: number;
  toMs: number;
  stepMs: number;
}

/**
 * from (default now-6h), to (default now) and step (default autoStepMs) of a
 * request; 400 when the range is empty, the step is under a minute (the
 * histograms are per minute) or the answer would have over `max.steps` steps
 * (named `max.name` in the message: points, columns).
 */
export function parseStepRange(
  query: { from?: string; to?: string; step?: string },
  max: { steps: number; name: string },
  now = Date.now(),
): StepRange {
  const toMs = parseTime(query.to ?? 'now', now, 'to');
  const fromMs = parseTime(query.from ?? 'now-6h', now, 'from');
  if (fromMs >= toMs) throw badRequest('"from" must be before "to"');
  let stepMs: number;
  try {
    stepMs = query.step ? parseDuration(query.step) : autoStepMs(toMs - fromMs);
  } catch (e) {
    throw badRequest(`step: ${(e as Error).message}`);
  }
  if (stepMs < 60_000) throw badRequest('step must be at least 1m (histograms are per minute)');
  if ((toMs - fromMs) / stepMs > max.steps)
    throw badRequest(`too many ${max.name} (> ${max.steps}); use a larger step`);
  return { fromMs, toMs, stepMs };
}

/** The cohort filter `key=value` (undefined when absent). */
export function parseAttribute(
  text: string | undefined,
): { key: string; value: string } | undefined {
  if (!text) return undefined;
  const eq = text.indexOf('=');
  if (eq <= 0) throw badRequest('attribute must look like key=value');
  return { key: text.slice(0, eq), value: text.slice(eq + 1) };
}
