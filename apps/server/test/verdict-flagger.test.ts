/**
 * The Flagger webhook gate (api.md "Verdict gates") with Flagger's documented
 * payloads ({name, namespace, phase, metadata}) against a real server whose
 * verdicts come from real traffic around each marker: a confirm-promotion
 * hook opens (200) on a pass and stays shut (412) on a fail, a rollback hook
 * (expect: fail) the other way round; the token travels as HTTP Basic, the
 * way Flagger's Go client sends a URL's user info.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deploy, VerdictGate } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { sendDeployTraffic } from '@onset/testkit/deploy-traffic';

const TOKEN = 'tok-flagger';
const MIN = 60_000;
let server: TestServer;
let pass: Deploy;
let fail: Deploy;
let thin: Deploy;

beforeAll(async () => {
  server = await startTestServer({ env: { ONSET_TOKENS: `ingest+deploys+read:${TOKEN}` } });
  const atMs = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;
  const common = { apiUrl: server.url, otlpUrl: server.otlpUrl, token: TOKEN, atMs };
  [pass, fail, thin] = await Promise.all([
    sendDeployTraffic({ ...common, service: 'podinfo', seed: 31 }),
    sendDeployTraffic({ ...common, service: 'checkout', slowdown: 2, seed: 32 }),
    sendDeployTraffic({ ...common, service: 'quiet', callsPerMinuteAfter: 10, seed: 33 }),
  ]);
});
afterAll(async () => {
  await server?.close();
});

/** What Go's net/http sends for https://onset:<token>@host/... */
const basic = (token: string) => `Basic ${Buffer.from(`onset:${token}`).toString('base64')}`;

async function hook(
  payload: unknown,
  authorization: string | null = basic(TOKEN),
): Promise<{ status: number; body: VerdictGate & { error?: string; message?: string } }> {
  const res = await fetch(`${server.url}/api/v1/verdicts/flagger`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify(payload),
  });
  return { status: res.status, body: (await res.json()) as never };
}

describe('Flagger webhook gate', () => {
  it('confirm-promotion: 200 for a passing deploy, 412 for a failing one, found by the canary name', async () => {
    const ok = await hook({ name: 'podinfo', namespace: 'test', phase: 'Progressing' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      open: true,
      deploy_id: pass.id,
      verdict: 'pass',
      expect: 'pass',
    });
    const shut = await hook({
      name: 'checkout-canary',
      namespace: 'prod',
      phase: 'Progressing',
      metadata: { service: 'checkout', environment: 'prod' },
    });
    expect(shut.status).toBe(412);
    expect(shut.body).toMatchObject({ open: false, deploy_id: fail.id, verdict: 'fail' });
    expect(shut.body.reason).toContain('checkout');
  });

  it('rollback (expect: fail): 200 only once the verdict is fail', async () => {
    const rollback = await hook({
      name: 'checkout',
      namespace: 'prod',
      phase: 'Progressing',
      metadata: { expect: 'fail' },
    });
    expect(rollback.status).toBe(200);
    expect(rollback.body).toMatchObject({ open: true, verdict: 'fail', expect: 'fail' });
    const stay = await hook({ name: 'podinfo', namespace: 'test', metadata: { expect: 'fail' } });
    expect(stay.status).toBe(412);
  });

  it('inconclusive holds unless metadata maps it; deploy_id picks the marker', async () => {
    const held = await hook({ name: 'quiet', namespace: 'test', phase: 'Waiting' });
    expect(held.status).toBe(412);
    expect(held.body.verdict).toBe('inconclusive');
    const mapped = await hook({
      name: 'anything',
      namespace: 'test',
      metadata: { deploy_id: thin.id, inconclusive: 'pass' },
    });
    expect(mapped.status).toBe(200);
    expect(mapped.body.deploy_id).toBe(thin.id);
  });

  it('a Bearer token works too; no token is 401, an unknown service 404, a bad body 400', async () => {
    expect((await hook({ name: 'podinfo' }, `Bearer ${TOKEN}`)).status).toBe(200);
    expect((await hook({ name: 'podinfo' }, null)).status).toBe(401);
    expect((await hook({ name: 'podinfo' }, basic('wrong'))).status).toBe(401);
    const none = await hook({ name: 'nobody', namespace: 'test' });
    expect(none.status).toBe(404);
    expect(none.body.message).toBe('no deploy marker of service nobody');
    const bad = await hook({ name: 'podinfo', metadata: { expect: 'maybe' } });
    expect(bad.status).toBe(400);
    expect((await hook({ namespace: 'test' })).status).toBe(400);
  });
});
