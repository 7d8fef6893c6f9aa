/**
 * SLO alert hysteresis, the rule that keeps one burn one alert: an SLO alert
 * whose burn stops is not resolved at once; it stays firing until no tier of
 * its severity has fired for the short window of the tier that fired last
 * (5 m for page_1h, 30 m for page_6h, 2 h for ticket_1d, 6 h for ticket_3d).
 * A burn that comes back within that time continues the same alert (same
 * dedup key, no new page, no resolve/fire pair to the receivers), as
 * Alertmanager's group_interval and Prometheus' keep_firing_for do.
 */
import { BURN_WINDOWS, type BurnWindow } from './rates.ts';

/** The quiet time after the last burn before an SLO alert resolves. */
export function sloAlertQuietMs(shortWindow: string | null | undefined): number {
  return shortWindow && shortWindow in BURN_WINDOWS
    ? BURN_WINDOWS[shortWindow as BurnWindow]
    : BURN_WINDOWS['5m'];
}

/** Whether a firing SLO alert whose tiers stopped firing resolves at `now`. */
export function sloAlertResolves(o: {
  lastBurningMs: number;
  shortWindow: string | null | undefined;
  now: number;
}): boolean {
  return o.now - o.lastBurningMs >= sloAlertQuietMs(o.shortWindow);
}
