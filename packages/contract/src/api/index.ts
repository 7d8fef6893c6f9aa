export * from './common.ts';
export * from './series.ts';
export * from './deploys.ts';
export * from './regressions.ts';
export * from './slos.ts';
export * from './alerts.ts';
export * from './webhooks.ts';
export * from './health.ts';
