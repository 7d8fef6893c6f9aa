/**
 * The TCPD development set (shared/data/tcpd-dev: README there) and how a
 * scalar series becomes the per-minute points Onset's detector reads.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { MinutePoint } from '@onset/core';
import type { Annotations } from './metrics.ts';

export interface TcpdSeries {
  name: string;
  values: Array<number | null>;
  annotations: Annotations;
}

/**
 * shared/ sits beside the repository (CI lays a copy there); from a git
 * worktree elsewhere, beside the main checkout. ONSET_TCPD_DIR overrides.
 */
export function tcpdDir(root: string, sub = 'tcpd-dev'): string {
  if (process.env.ONSET_TCPD_DIR) return process.env.ONSET_TCPD_DIR;
  const beside = path.resolve(root, '../shared/data', sub);
  if (existsSync(beside)) return beside;
  try {
    const common = execFileSync(
      'git',
      ['rev-parse', '--path-format=absolute', '--git-common-dir'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    ).trim();
    const main = path.resolve(path.dirname(common), '../shared/data', sub);
    if (existsSync(main)) return main;
  } catch {
    // not a git checkout: fall through
  }
  return beside;
}

export async function loadTcpd(dir: string): Promise<TcpdSeries[]> {
  const source = JSON.parse(await readFile(path.join(dir, 'SOURCE.json'), 'utf8')) as {
    series: string[];
  };
  const annotations = JSON.parse(
    await readFile(path.join(dir, 'annotations.json'), 'utf8'),
  ) as Record<string, Annotations>;
  const out: TcpdSeries[] = [];
  for (const name of source.series) {
    const d = JSON.parse(await readFile(path.join(dir, `${name}.json`), 'utf8')) as {
      series: Array<{ raw: Array<number | null> }>;
    };
    out.push({ name, values: d.series[0]!.raw, annotations: annotations[name] ?? {} });
  }
  return out;
}

/** Points are a minute apart from this (arbitrary) start. */
const T0 = Date.UTC(2026, 0, 1);

/**
 * One observation -> one minute holding a single event: count 1 and both
 * quantiles equal to the value (a minute's only event is its p50 and its
 * p99). A missing value is a minute without data (count 0), which the
 * detector skips while keeping its index. Every TCPD value used is positive
 * (the detector works on logs).
 */
export function toMinutePoints(values: ReadonlyArray<number | null>): MinutePoint[] {
  return values.map((v, i) =>
    v === null || !Number.isFinite(v) || v <= 0
      ? { t: T0 + i * 60_000, count: 0, p50: NaN, p99: NaN }
      : { t: T0 + i * 60_000, count: 1, p50: v, p99: v },
  );
}
