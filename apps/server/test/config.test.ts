/**
 * Configuration from the environment (zod schemas in config.ts and
 * webhooks/settings.ts): the documented defaults, errors naming the variable,
 * empty meaning unset, secrets never echoed, docs/deploy.md listing every
 * variable, and the real entry point refusing a bad value with exit code 2.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, ServerEnv, loadConfig } from '../src/config.ts';
import { WebhookEnv, deliverySettings } from '../src/webhooks/settings.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('an empty environment gives the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      otlpPort: 4318,
      databaseUrl: undefined,
      dataDir: path.resolve('.onset'),
      maxBodyBytes: 64 * 1024 * 1024,
      rawRetentionMs: 48 * 3_600_000,
      histogramRetentionMs: 90 * 86_400_000,
      maxSpanDurationMs: 86_400_000,
      maxAttributesPerSpan: 1024,
      logLevel: 'info',
      publicUrl: undefined,
      metricsToken: undefined,
      grafanaUrl: undefined,
      grafanaToken: undefined,
      dbRetryMaxMs: 10_000,
      traceUrlTemplate: undefined,
      embeddedPgPort: undefined,
      withAgent: true,
    });
    expect(c.tokens.size).toBe(0);
    expect(deliverySettings({})).toMatchObject({
      timeoutMs: 10_000,
      baseDelayMs: 5_000,
      maxDelayMs: 600_000,
      giveUpMs: 86_400_000,
    });
  });

  it('an empty variable counts as unset', () => {
    const c = loadConfig({ ONSET_PORT: '', ONSET_RAW_RETENTION: '', ONSET_METRICS_TOKEN: '' });
    expect([c.port, c.rawRetentionMs, c.metricsToken]).toEqual([8080, 48 * 3_600_000, undefined]);
  });

  it('values are converted', () => {
    const c = loadConfig({
      ONSET_PORT: '9090',
      ONSET_OTLP_PORT: '0',
      ONSET_RAW_RETENTION: '90m',
      ONSET_DB_RETRY_MAX: '500ms',
      ONSET_AGENT: 'off',
      ONSET_EMBEDDED_PG_PORT: '5433',
      DATABASE_URL: 'postgres://x@db/onset',
    });
    expect(c).toMatchObject({
      port: 9090,
      otlpPort: 0,
      rawRetentionMs: 90 * 60_000,
      dbRetryMaxMs: 500,
      withAgent: false,
      embeddedPgPort: 5433,
      databaseUrl: 'postgres://x@db/onset',
    });
    expect(deliverySettings({ ONSET_WEBHOOK_RETRY_BASE: '2s' }).baseDelayMs).toBe(2000);
  });
});

describe('errors name the variable and its value', () => {
  it.each([
    ['ONSET_PORT', '80a', 'ONSET_PORT must be a non-negative integer, got "80a"'],
    ['ONSET_OTLP_PORT', '-1', 'ONSET_OTLP_PORT must be a non-negative integer, got "-1"'],
    [
      'ONSET_MAX_ATTRIBUTES',
      '1.5',
      'ONSET_MAX_ATTRIBUTES must be a non-negative integer, got "1.5"',
    ],
    ['ONSET_RAW_RETENTION', '2 weeks', 'ONSET_RAW_RETENTION: invalid duration "2 weeks"'],
    ['ONSET_AGENT', 'of', 'ONSET_AGENT must be on or off, got "of"'],
  ])('%s=%s', (key, value, message) => {
    expect(errorOf(() => loadConfig({ [key]: value }))).toContain(message);
  });

  it('every bad variable is reported at once', () => {
    const m = errorOf(() => loadConfig({ ONSET_PORT: 'x', ONSET_HISTOGRAM_RETENTION: 'y' }));
    expect(m).toMatch(/ONSET_PORT .*"x".*; ONSET_HISTOGRAM_RETENTION: .*"y"/);
  });

  it('webhook settings too', () => {
    expect(errorOf(() => deliverySettings({ ONSET_WEBHOOK_TIMEOUT: 'ten' }))).toContain(
      'ONSET_WEBHOOK_TIMEOUT: invalid duration "ten"',
    );
  });

  it('per-service verdict settings: parsed, and refused with the field named', () => {
    expect(
      loadConfig({
        ONSET_VERDICT_SERVICES:
          '{"checkout": {"p50_ratio": 1.05, "min_count": 100, "window": "15m"}}',
      }).verdictServices,
    ).toEqual({ checkout: { p50Ratio: 1.05, minCount: 100, windowMs: 15 * 60_000 } });
    expect(loadConfig({}).verdictServices).toEqual({});
    expect(errorOf(() => loadConfig({ ONSET_VERDICT_SERVICES: 'checkout=1.1' }))).toContain(
      'ONSET_VERDICT_SERVICES must be JSON',
    );
    expect(
      errorOf(() => loadConfig({ ONSET_VERDICT_SERVICES: '{"a": {"p50_ratio": 0.5}}' })),
    ).toMatch(/^ONSET_VERDICT_SERVICES: a\.p50_ratio: /);
    expect(
      errorOf(() => loadConfig({ ONSET_VERDICT_SERVICES: '{"a": {"window": "10s"}}' })),
    ).toContain('a.window: window must be 1m to 2h');
    expect(errorOf(() => loadConfig({ ONSET_VERDICT_SERVICES: '{"a": {"p90": 2}}' }))).toMatch(
      /^ONSET_VERDICT_SERVICES: a: /,
    );
  });

  it('token specs are checked without echoing the token', () => {
    const m = errorOf(() => loadConfig({ ONSET_TOKENS: 'root:s3cr3t-value' }));
    expect(m).toContain('ONSET_TOKENS: unknown scope "root"');
    expect(m).not.toContain('s3cr3t');
  });
});

describe('docs/deploy.md lists every variable', () => {
  const docs = readFileSync(path.join(repo, 'docs/deploy.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## Configuration'), docs.indexOf('## Tokens'));
  const keys = [...Object.keys(ServerEnv.shape), ...Object.keys(WebhookEnv.shape)];
  it.each(keys)('%s', (key) => {
    expect(section).toContain(`| \`${key}\``);
  });
});

describe('the entry point', () => {
  it('refuses a bad value before listening: exit code 2, one line naming it', () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(repo, 'apps/server/src/main.ts')],
      {
        cwd: repo,
        env: { PATH: process.env.PATH, ONSET_PORT: '80a', ONSET_DATA_DIR: '/nonexistent' },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('onset: ONSET_PORT must be a non-negative integer, got "80a"');
  });
});
