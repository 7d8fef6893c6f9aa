/** JSON over node:http for benchmarks: fetch gives up on a response header after 300 s, and a cold pass over many series can take longer. */
import http from 'node:http';

export function callJson<T>(method: string, url: string, body?: unknown): Promise<T> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, headers: data ? { 'content-type': 'application/json' } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 400)
            reject(new Error(`${method} ${url}: ${res.statusCode} ${text.slice(0, 300)}`));
          else resolve(JSON.parse(text) as T);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}
