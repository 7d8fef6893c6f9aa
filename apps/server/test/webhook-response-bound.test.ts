import { afterAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { allowLoopbackWebhooks } from '@onset/testkit';
import { post, RESPONSE_READ_BYTES } from '../src/webhooks/deliver.ts';

// The receiver is on loopback, outside the default webhook egress policy.
allowLoopbackWebhooks();

/**
 * A receiver that answers 200 with a 256 MiB body, written as fast as the
 * client takes it. Delivery must read a few KiB, then drop the connection.
 */
const TOTAL = 256 * 1024 * 1024;
let written = 0;
let closedEarly: Promise<boolean>;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(TOTAL) });
    const chunk = Buffer.alloc(64 * 1024, 'x');
    closedEarly = new Promise((resolve) => {
      res.on('close', () => resolve(written < TOTAL));
      const pump = () => {
        while (written < TOTAL && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (written >= TOTAL) res.end();
      };
      pump();
    });
  });
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('webhook responses are bounded', () => {
  it('reads a few KiB of a 256 MiB answer and drops the connection', async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const rssBefore = process.memoryUsage().rss;
    const outcome = await post(
      url,
      '{"test":true}',
      { 'content-type': 'application/json' },
      10_000,
    );
    expect(outcome.status_code).toBe(200);
    expect(outcome.error).toBeNull();
    expect(outcome.response).toBe('x'.repeat(500));
    // The receiver sees the connection closed long before its body was sent.
    expect(await closedEarly).toBe(true);
    expect(written).toBeLessThan(TOTAL / 4);
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    console.log(
      `bounded webhook response: read ${RESPONSE_READ_BYTES} B, receiver wrote ${(written / 1048576).toFixed(1)} MiB ` +
        `of 256 MiB before the drop, ${outcome.duration_ms.toFixed(0)} ms, RSS +${(rssGrowth / 1048576).toFixed(1)} MiB`,
    );
  });
});
