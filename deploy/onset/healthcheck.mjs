// Container health check for the Onset server: ready when /readyz answers 200
// (the process serves and PostgreSQL answers). Exit 0 healthy, 1 not.
const port = process.env.ONSET_PORT || '8080';
const host =
  !process.env.ONSET_HOST || process.env.ONSET_HOST === '0.0.0.0' || process.env.ONSET_HOST === '::'
    ? '127.0.0.1'
    : process.env.ONSET_HOST;
const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/readyz`;
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
  if (res.ok) process.exit(0);
  console.error(
    `onset healthcheck: ${url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`,
  );
} catch (err) {
  console.error(`onset healthcheck: ${url}: ${err instanceof Error ? err.message : err}`);
}
process.exit(1);
