/**
 * A version rollout that reaches one host of three: payments POST /charge
 * takes 20–30 ms everywhere until 2.4.0 lands on pay-3 at the onset, after
 * which pay-3's calls take 300–360 ms. Two hosts of three stay fast, so the
 * whole series' p50 barely moves while the slow cohort's is ×13: the case a
 * chart of the whole series alone contradicts (issue 29).
 */
import { mulberry32 } from '../random.ts';
import { Batch, post } from './otlp-json.ts';
import { within } from './spans.ts';
import { MIN, type IncidentTimes } from './times.ts';

export const ROLLOUT = {
  service: 'payments',
  route: 'POST /charge',
  hosts: ['pay-1', 'pay-2', 'pay-3'],
  rolled: 'pay-3',
  versions: ['2.3.0', '2.4.0'],
  perMinute: 20,
} as const;

export const paymentsResource = (host: string, after: boolean): Record<string, string> => ({
  'service.name': ROLLOUT.service,
  'host.name': host,
  'service.version': ROLLOUT.versions[after && host === ROLLOUT.rolled ? 1 : 0],
  'os.version': '6.1.0-18',
});

/** Send the rollout's spans over `t` and its deploy marker (on pay-3, a minute before the onset). */
export async function sendVersionRollout(o: {
  otlpUrl: string;
  apiUrl: string;
  times: IncidentTimes;
  token?: string;
}): Promise<void> {
  const t = o.times;
  const rand = mulberry32(2924);
  let batch = new Batch();
  const flush = async () => {
    if (!batch.size) return;
    await post(`${o.otlpUrl}/v1/traces`, batch.body(), o.token);
    batch = new Batch();
  };
  for (let minute = t.fromMs; minute < t.endMs; minute += MIN) {
    const after = minute >= t.onsetMs;
    for (const host of ROLLOUT.hosts) {
      const res = paymentsResource(host, after);
      const slow = res['service.version'] === ROLLOUT.versions[1];
      for (let k = 0; k < ROLLOUT.perMinute; k++) {
        const ms = slow ? 300 + rand() * 60 : 20 + rand() * 10;
        batch.span(res, ROLLOUT.route, 'server', within(rand, minute, k, ROLLOUT.perMinute), ms, {
          'http.request.method': 'POST',
          'http.route': '/charge',
        });
      }
    }
    if (batch.size >= 3000) await flush();
  }
  await flush();
  await post(
    `${o.apiUrl}/api/v1/deploys`,
    {
      environment: 'prod',
      service: ROLLOUT.service,
      hosts: [ROLLOUT.rolled],
      kind: 'code',
      from_version: ROLLOUT.versions[0],
      to_version: ROLLOUT.versions[1],
      description: 'payments 2.4.0, canary',
      at: new Date(t.onsetMs - MIN).toISOString(),
    },
    o.token,
  );
}
