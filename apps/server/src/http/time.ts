import { parseTime as parseTimeText, TimeSyntaxError } from '@onset/contract';
import { badRequest } from './errors.ts';

/** The contract's time grammar (RFC 3339, epoch ms, "now", "now-6h"); bad text is a 400 naming the field. */
export function parseTime(text: string, now: number, field: string): number {
  try {
    return parseTimeText(text, now);
  } catch (e) {
    if (e instanceof TimeSyntaxError) throw badRequest(`${field}: ${e.message}`);
    throw e;
  }
}
