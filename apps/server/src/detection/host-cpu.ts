/**
 * The hosts' stolen CPU around a step (core's hostCpuRise), read from the
 * `host` series the agents report (op 'host', name 'cpu-steal': ms of the CPU
 * time the host wanted that the hypervisor gave to others, per second).
 */
import type { Queryable } from '../db/pool.ts';
import { HOST_CPU_BEFORE_MS, hostCpuRise, type HostCpuMinute, type HostCpuRise } from '@onset/core';

/** The series name the agent gives a host's stolen CPU share (apps/agent, docs/agent.md). */
export const HOST_CPU_STEAL_SERIES = 'cpu-steal';

/** Per minute, the mean stolen share over the hosts' agents, in [fromMs, toMs). */
export async function hostCpuMinutes(
  db: Queryable,
  hosts: readonly string[],
  fromMs: number,
  toMs: number,
): Promise<HostCpuMinute[]> {
  if (!hosts.length) return [];
  const { rows } = await db.query<{ ms: number; v: number }>(
    `SELECT (extract(epoch FROM h.minute) * 1000)::float8 AS ms,
            (sum(h.sum_us) / sum(h.count) / 1000)::float8 AS v
       FROM histograms h JOIN resources res ON res.id = h.resource_id
      WHERE h.series_id IN (SELECT id FROM series WHERE op = 'host' AND view = 'internal' AND name = $1)
        AND res.host = ANY($2::text[]) AND h.minute >= $3 AND h.minute < $4 AND h.count > 0
      GROUP BY h.minute ORDER BY h.minute`,
    [HOST_CPU_STEAL_SERIES, hosts, new Date(fromMs), new Date(toMs)],
  );
  return rows.map((r) => ({ minuteMs: Number(r.ms), stealMsPerS: Number(r.v) }));
}

/** Whether the step's hosts lost CPU to the hypervisor at its onset, seen through `throughMs`. */
export async function hostCpuRiseAt(
  db: Queryable,
  hosts: readonly string[],
  onsetMs: number,
  throughMs: number,
): Promise<HostCpuRise | null> {
  const minutes = await hostCpuMinutes(db, hosts, onsetMs - HOST_CPU_BEFORE_MS, throughMs);
  return hostCpuRise(minutes, onsetMs, throughMs);
}
