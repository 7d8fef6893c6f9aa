import { parseTime as parseTimeText, TimeSyntaxError } from '@onset/contract';
import { badRequest } from './errors.ts';

/**
 * The instants a request may name, years 0001 to 9999: what JavaScript dates
 * and PostgreSQL timestamps both hold and print in RFC 3339. "now-99999999w"
 * means "since the beginning" and reads as the first of them, not as a time
 * no date can hold.
 */
const FIRST_MS = new Date('0001-01-01T00:00:00Z').getTime();
const LAST_MS = new Date('9999-12-31T23:59:59.999Z').getTime();

/** The contract's time grammar (RFC 3339, epoch ms, "now", "now-6h"); bad text is a 400 naming the field. */
export function parseTime(text: string, now: number, field: string): number {
  let ms: number;
  try {
    ms = parseTimeText(text, now);
  } catch (e) {
    if (e instanceof TimeSyntaxError) throw badRequest(`${field}: ${e.message}`);
    throw e;
  }
  return Math.min(Math.max(ms, FIRST_MS), LAST_MS);
}
