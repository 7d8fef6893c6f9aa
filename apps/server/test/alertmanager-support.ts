/**
 * A real Prometheus Alertmanager for tests: built from its module on the Go
 * proxy (`go install …/cmd/alertmanager@ALERTMANAGER_VERSION`, cached under
 * node_modules/.cache/onset-alertmanager; a cold build takes minutes, later
 * runs none), started on loopback behind HTTP basic auth (its
 * --web.config.file with a bcrypt hash) and routing every alert to one
 * webhook receiver with group_wait/group_interval of a second.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcryptjs';

export const ALERTMANAGER_VERSION = 'v0.28.1';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CACHE = path.join(ROOT, 'node_modules/.cache/onset-alertmanager', ALERTMANAGER_VERSION);
const GO =
  process.env.GO ?? ['/usr/local/go/bin/go', '/usr/bin/go'].find((p) => existsSync(p)) ?? null;

/** Why a real Alertmanager cannot be had here, or null. */
export const alertmanagerMissing = GO ? null : 'needs Go (/usr/local/go/bin/go, or GO=path)';

/** The alertmanager binary, built once per version. */
export async function buildAlertmanager(): Promise<string> {
  const bin = path.join(CACHE, 'alertmanager');
  if (existsSync(bin)) return bin;
  await new Promise<void>((resolve, reject) =>
    execFile(
      GO!,
      ['install', `github.com/prometheus/alertmanager/cmd/alertmanager@${ALERTMANAGER_VERSION}`],
      {
        env: { ...process.env, GOBIN: CACHE, CGO_ENABLED: '0' },
        timeout: 900_000,
        maxBuffer: 16 << 20,
      },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`go install alertmanager failed: ${err}\n${stdout}${stderr}`))
          : resolve(),
    ),
  );
  return bin;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RunningAlertmanager {
  /** Base URL without credentials (what an `alertmanager` webhook points at). */
  url: string;
  user: string;
  password: string;
  /** GET an API path with the credentials. */
  get: (p: string) => Promise<any>;
  stop: () => Promise<void>;
}

export async function startAlertmanager(opts: {
  bin: string;
  receiverUrl: string;
  user?: string;
  password?: string;
}): Promise<RunningAlertmanager> {
  const user = opts.user ?? 'onset';
  const password = opts.password ?? `pw-${Math.random().toString(36).slice(2)}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'onset-am-'));
  writeFileSync(
    path.join(dir, 'alertmanager.yml'),
    [
      'route:',
      '  receiver: rx',
      "  group_by: ['dedup_key']",
      '  group_wait: 1s',
      '  group_interval: 1s',
      '  repeat_interval: 1h',
      'receivers:',
      '  - name: rx',
      '    webhook_configs:',
      `      - url: ${JSON.stringify(opts.receiverUrl)}`,
      '        send_resolved: true',
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(dir, 'web.yml'),
    `basic_auth_users:\n  ${user}: ${JSON.stringify(bcrypt.hashSync(password, 8))}\n`,
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    opts.bin,
    [
      `--config.file=${path.join(dir, 'alertmanager.yml')}`,
      `--web.config.file=${path.join(dir, 'web.yml')}`,
      `--storage.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // No cluster: a lone Alertmanager need not wait for gossip to settle before notifying.
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const get = async (p: string) => {
    const r = await fetch(`${url}${p}`, { headers: { authorization: auth } });
    if (!r.ok) throw new Error(`alertmanager GET ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`alertmanager exited ${child.exitCode}: ${stderr}`);
    try {
      const r = await fetch(`${url}/-/ready`, { headers: { authorization: auth } });
      if (r.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`alertmanager not ready in 30 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    user,
    password,
    get,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
