import type { Severity } from './vocab.ts';

/**
 * What an alert episode is about. At most one episode per key is firing;
 * webhooks and the UI refer to an alert's subject by its key.
 */
export const sloAlertKey = (sloId: string, severity: Severity): string =>
  `slo:${sloId}:${severity}`;
export const regressionAlertKey = (regressionId: string | number): string =>
  `regression:${regressionId}`;
/** A deploy whose verdict failed (api.md "Deploy verdicts"). */
export const verdictAlertKey = (deployId: string | number): string => `verdict:${deployId}`;
