/**
 * Many series fast: one OTLP/JSON export per service, one span per series (kind server,
 * named by two lower-case words and the service: no digits, which route templating would
 * fold; no name is another service's). 5,000 series are 10 exports. The list API orders
 * series by service, op, view, name, peer.
 */
import { randomBytes } from 'node:crypto';

const A =
  'amber basil cedar dune ember fern grove heath iris juniper kelp lotus moss nectar olive pine quartz reed sage thyme umber vale willow yarrow zinnia'.split(
    ' ',
  );
const B =
  'apple brook cliff dawn elk frost glen hill isle jay knoll lake marsh north oak pond quail ridge stone trail'.split(
    ' ',
  );
/** Ten service names, in the order the list API sorts them. */
export const MANY_SERVICES = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet'.split(
  ' ',
);

/** The span names of one service: `perService` word pairs (at most 500) and the service. */
export function manySeriesNames(service: string, perService: number): string[] {
  if (perService > A.length * B.length) throw new Error(`at most ${A.length * B.length} a service`);
  const names: string[] = [];
  for (const a of A) for (const b of B) names.push(`${a} ${b} ${service}`);
  return names.slice(0, perService);
}

/**
 * Send `services.length × perService` series (default 10 × 500 = 5,000), each one call of
 * 3 ms about five minutes ago, on host `<service>-host`. Resolves when every export is stored.
 */
export async function sendManySeries(
  otlpUrl: string,
  o: { services?: string[]; perService?: number; headers?: Record<string, string> } = {},
): Promise<void> {
  const services = o.services ?? MANY_SERVICES;
  const now = Date.now();
  for (const service of services) {
    const spans = manySeriesNames(service, o.perService ?? 500).map((name, i) => {
      const start = BigInt(now - 5 * 60_000 + i * 10) * 1_000_000n;
      return {
        traceId: randomBytes(16).toString('hex'),
        spanId: randomBytes(8).toString('hex'),
        name,
        kind: 2,
        startTimeUnixNano: start.toString(),
        endTimeUnixNano: (start + 3_000_000n).toString(),
      };
    });
    const res = await fetch(`${otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...o.headers },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: {
              attributes: [
                { key: 'service.name', value: { stringValue: service } },
                { key: 'host.name', value: { stringValue: `${service}-host` } },
              ],
            },
            scopeSpans: [{ spans }],
          },
        ],
      }),
    });
    if (res.status !== 200)
      throw new Error(`OTLP export of ${service}: ${res.status} ${await res.text()}`);
  }
}
