/**
 * The ingest edge under hostile clients (api.md "Ingest", docs/security.md):
 * the token is checked on the headers, before any body is read, so ten
 * concurrent unauthenticated 60 MiB uploads cost no memory; a client sending
 * its request 1 byte at a time is cut off (ONSET_REQUEST_TIMEOUT); and a
 * token over ONSET_INGEST_CONCURRENCY exports in flight gets 429 with
 * Retry-After, without touching other tokens' budgets.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';

const MiB = 1024 * 1024;
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({
    env: {
      ONSET_TOKENS: 'ingest:tok-a-81c3,ingest:tok-b-27fe',
      ONSET_INGEST_CONCURRENCY: '2',
      ONSET_REQUEST_TIMEOUT: '2s',
    },
  });
});

afterAll(async () => {
  await srv?.close();
});

const target = () => new URL(srv.otlpUrl);

/** POST `total` bytes from one shared chunk (the client holds ~1 MiB), stopping when the answer comes. */
function bigUpload(total: number, headers: Record<string, string>) {
  const chunk = Buffer.alloc(MiB, 0x61);
  return new Promise<{ status: number; sent: number }>((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request({
      host: target().hostname,
      port: target().port,
      path: '/v1/traces',
      method: 'POST',
      headers: {
        'content-type': 'application/x-protobuf',
        'content-length': String(total),
        ...headers,
      },
    });
    req.on('response', (res) => {
      answered = true;
      res.resume();
      res.on('end', () => {
        resolve({ status: res.statusCode!, sent });
        req.destroy();
      });
    });
    req.on('error', (e) => (answered ? undefined : reject(e)));
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** A request whose headers arrive and whose body does not (yet): it holds an ingest slot. */
function hangingRequest(token: string) {
  const socket = net.connect(Number(target().port), target().hostname);
  let answer = '';
  socket.on('data', (d) => (answer += d.toString()));
  socket.on('error', () => {});
  socket.write(
    `POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n`,
  );
  const closed = new Promise<void>((r) => socket.on('close', () => r()));
  return {
    finish: async () => {
      socket.end('{}');
      await closed;
      return answer;
    },
    abort: () => socket.destroy(),
  };
}

const post = (token: string) =>
  fetch(`${srv.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });

describe('auth before body', () => {
  it('ten concurrent unauthenticated 60 MiB uploads get 401 without the bodies reaching memory', async () => {
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        bigUpload(60 * MiB, i % 2 ? { authorization: 'Bearer wrong-token' } : {}),
      ),
    );
    clearInterval(sampler);
    const growth = (peak - before) / MiB;
    const sent = results.reduce((s, r) => s + r.sent, 0) / MiB;
    console.log(
      `10 x 60 MiB unauthenticated: statuses ${[...new Set(results.map((r) => r.status))]}, ` +
        `${sent.toFixed(0)} MiB written by the clients before the 401s, peak RSS growth ${growth.toFixed(1)} MiB`,
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(401));
    // Ten buffered bodies would be 600 MiB; the clients' own chunk and socket buffers are a few MiB.
    expect(growth).toBeLessThan(64);
  });
});

describe('request timeout', () => {
  it('cuts off a client sending its body one byte at a time', async () => {
    const socket = net.connect(Number(target().port), target().hostname);
    let answer = '';
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('error', () => {});
    socket.write(
      'POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-b-27fe\r\n' +
        'Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n',
    );
    let bytes = 0;
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    let open = true;
    void closed.then(() => (open = false));
    const t0 = Date.now();
    // 1 byte per 500 ms: 10,000 bytes would take 83 minutes. The server must hang up long before.
    while (open && bytes < 10_000) {
      socket.write('{');
      bytes++;
      await new Promise((r) => setTimeout(r, 500));
    }
    await closed;
    console.log(
      `slow body: cut off after ${bytes} bytes, ${Date.now() - t0} ms: ${answer.split('\r\n')[0]}`,
    );
    expect(bytes).toBeLessThan(10_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    // The slot it held is free again: this token can still export.
    expect((await post('tok-b-27fe')).status).toBe(200);
  });

  it('cuts off a client sending its headers one byte at a time', async () => {
    const socket = net.connect(Number(target().port), target().hostname);
    let answer = '';
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('error', () => {});
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    let open = true;
    void closed.then(() => (open = false));
    const headers = 'POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ' + 'a'.repeat(1000);
    let i = 0;
    while (open && i < headers.length) {
      socket.write(headers[i++]!);
      await new Promise((r) => setTimeout(r, 200));
    }
    await closed;
    expect(i).toBeLessThan(headers.length);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });
});

describe('per-token concurrency', () => {
  it('answers 429 with Retry-After over the limit, per token, and frees slots when requests end', async () => {
    const a1 = hangingRequest('tok-a-81c3');
    const a2 = hangingRequest('tok-a-81c3');
    // The two hold their slots once their headers are in; poll until the third is refused.
    let third: Response | undefined;
    for (let i = 0; i < 50; i++) {
      third = await post('tok-a-81c3');
      if (third.status === 429) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(third!.status).toBe(429);
    expect(third!.headers.get('retry-after')).toBe('1');
    const status = (await third!.json()) as { code: number; message: string };
    expect(status.code).toBe(8); // google.rpc RESOURCE_EXHAUSTED, as OTLP clients expect
    expect(status.message).toMatch(/ONSET_INGEST_CONCURRENCY/);
    // Another token has its own budget.
    expect((await post('tok-b-27fe')).status).toBe(200);
    // Finished and aborted requests give their slots back.
    expect(await a1.finish()).toMatch(/^HTTP\/1\.1 200/);
    a2.abort();
    let after: Response | undefined;
    for (let i = 0; i < 50; i++) {
      after = await post('tok-a-81c3');
      if (after.status === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(after!.status).toBe(200);
    // And both slots are free: two at once pass.
    const both = await Promise.all([post('tok-a-81c3'), post('tok-a-81c3')]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
  });
});
