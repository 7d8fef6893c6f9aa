/**
 * An Onset silence reaches every enabled `alertmanager` target as an
 * Alertmanager silence (POST /api/v2/silences), so the alert Onset already
 * sent (and keeps re-sending while it fires) is suppressed there too; when
 * the Onset silence ends it is expired there (DELETE /api/v2/silence/{id}).
 * The matchers are the Onset silence's own (service, slo_id, op: the labels
 * Onset's alerts carry) with alertname=~"Onset.+", so it never holds another
 * source's alerts. A reconcile pass: run right after a silence is made or
 * ended, and every minute with the re-send (a failed call is retried then).
 * Its state is the `alertmanager_silences` table (owned by webhooks/).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from '../db/pool.ts';
import { deliverySettings } from './settings.ts';
import { activeSilences, type SilenceRow } from '../alerts/silences.ts';
import { alertmanagerApiUrl } from './formats.ts';
import { authHeaders } from './auth.ts';
import { send } from './deliver.ts';
import type { WebhookRow } from './store.ts';

interface Mirror {
  webhook_id: string;
  silence_id: string;
  am_silence_id: string | null;
  ends_at: Date;
}

export interface SilenceSyncResult {
  created: number;
  expired: number;
  failed: number;
  errors: string[];
}

/** Alertmanager's PostableSilence for an Onset silence. */
export function alertmanagerSilence(s: SilenceRow, now: number) {
  const eq = (name: string, value: string) => ({ name, value, isRegex: false, isEqual: true });
  const matchers = [
    { name: 'alertname', value: 'Onset.+', isRegex: true, isEqual: true },
    ...(s.service !== null ? [eq('service', s.service)] : []),
    ...(s.slo_id !== null ? [eq('slo_id', s.slo_id)] : []),
    ...(s.op !== null ? [eq('op', s.op)] : []),
  ];
  return {
    matchers,
    startsAt: new Date(Math.min(now, s.starts_at.getTime())).toISOString(),
    endsAt: s.ends_at.toISOString(),
    createdBy: s.created_by ?? 'onset',
    comment: `Onset silence ${s.id}${s.comment ? `: ${s.comment}` : ''}`,
  };
}

/** Key of the advisory lock a sync holds: one at a time across this server's hook, the minute's pass and other servers. */
const SILENCE_SYNC_LOCK_KEY = 0x0de7ed2;

/**
 * Reconcile Onset's active silences with every Alertmanager target. Runs under an advisory
 * lock: two overlapping passes would both see a silence missing and create it twice.
 */
export async function syncAlertmanagerSilences(
  pool: Pool,
  opts: { timeoutMs: number; now?: number },
): Promise<SilenceSyncResult> {
  const lock = await pool.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [SILENCE_SYNC_LOCK_KEY]);
    return await syncUnderLock(pool, opts);
  } finally {
    // A connection that cannot unlock is dropped, which ends its lock too.
    const unlocked = await lock
      .query('SELECT pg_advisory_unlock($1)', [SILENCE_SYNC_LOCK_KEY])
      .then(
        () => true,
        () => false,
      );
    lock.release(!unlocked);
  }
}

async function syncUnderLock(
  pool: Pool,
  opts: { timeoutMs: number; now?: number },
): Promise<SilenceSyncResult> {
  const now = opts.now ?? Date.now();
  const r: SilenceSyncResult = { created: 0, expired: 0, failed: 0, errors: [] };
  const { rows: targets } = await pool.query<Pick<WebhookRow, 'id' | 'url' | 'auth'>>(
    `SELECT id::text, url, auth FROM webhooks WHERE enabled AND format = 'alertmanager' ORDER BY id`,
  );
  const { rows: mirrors } = await pool.query<Mirror>(
    `SELECT webhook_id::text, silence_id::text, am_silence_id, ends_at
       FROM alertmanager_silences WHERE expired_at IS NULL`,
  );
  const active = targets.length || mirrors.length ? await activeSilences(pool, now) : [];
  const byId = new Map(active.map((s) => [s.id, s]));
  const headers = (t: Pick<WebhookRow, 'auth'>) => ({
    ...authHeaders(t.auth),
    'content-type': 'application/json',
    'user-agent': 'Onset-Webhook/1',
  });
  const record = (m: { webhook_id: string; silence_id: string }, sets: string, args: unknown[]) =>
    pool.query(
      `UPDATE alertmanager_silences SET ${sets}, updated_at = now() WHERE webhook_id = $1 AND silence_id = $2`,
      [m.webhook_id, m.silence_id, ...args],
    );
  const fail = (what: string, err: string | null) => {
    r.failed++;
    r.errors.push(`${what}: ${err ?? 'no answer'}`);
  };

  // Expire what no longer holds: the Onset silence ended (or changed its end), or the target went away.
  const targetById = new Map(targets.map((t) => [t.id, t]));
  for (const m of mirrors) {
    const s = byId.get(m.silence_id);
    const t = targetById.get(m.webhook_id);
    if (s && t && s.ends_at.getTime() === m.ends_at.getTime() && m.am_silence_id) continue;
    if (!m.am_silence_id || !t) {
      if (!s || !t) await record(m, 'expired_at = $3', [new Date(now)]);
      continue;
    }
    const o = await send(
      'DELETE',
      alertmanagerApiUrl(t.url, `/api/v2/silence/${encodeURIComponent(m.am_silence_id)}`),
      null,
      headers(t),
      opts.timeoutMs,
    );
    // 404: Alertmanager no longer has it (restarted without state, or already expired).
    if (
      o.status_code !== null &&
      ((o.status_code >= 200 && o.status_code < 300) || o.status_code === 404)
    ) {
      await record(m, 'expired_at = $3, last_error = NULL', [new Date(now)]);
      r.expired++;
    } else {
      await record(m, 'last_error = $3', [o.error]);
      fail(`expire silence ${m.silence_id} at webhook ${m.webhook_id}`, o.error);
    }
  }

  // Create what holds now and is not there yet.
  const { rows: live } = await pool.query<{ webhook_id: string; silence_id: string }>(
    `SELECT webhook_id::text, silence_id::text FROM alertmanager_silences WHERE expired_at IS NULL AND am_silence_id IS NOT NULL`,
  );
  const have = new Set(live.map((m) => `${m.webhook_id}/${m.silence_id}`));
  for (const t of targets)
    for (const s of active) {
      if (have.has(`${t.id}/${s.id}`)) continue;
      const o = await send(
        'POST',
        alertmanagerApiUrl(t.url, '/api/v2/silences'),
        JSON.stringify(alertmanagerSilence(s, now)),
        headers(t),
        opts.timeoutMs,
      );
      let amId: string | null = null;
      if (o.status_code !== null && o.status_code >= 200 && o.status_code < 300) {
        try {
          amId = (JSON.parse(o.response ?? '') as { silenceID?: string }).silenceID ?? null;
        } catch {
          amId = null;
        }
      }
      const error = amId ? null : (o.error ?? 'answer without a silenceID');
      await pool.query(
        `INSERT INTO alertmanager_silences (webhook_id, silence_id, am_silence_id, ends_at, last_error)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (webhook_id, silence_id) DO UPDATE
           SET am_silence_id = $3, ends_at = $4, last_error = $5, expired_at = NULL, updated_at = now()`,
        [t.id, s.id, amId, s.ends_at, error],
      );
      if (amId) r.created++;
      else fail(`silence ${s.id} at webhook ${t.id}`, error);
    }
  return r;
}

/**
 * What the silence routes call once a silence was made or ended: a sync in the
 * background (the silence is already committed; the minute's pass retries a failure).
 * Syncs do not overlap: one asked for while another runs follows it.
 */
export function alertmanagerSilenceHook(pool: Pool, log: FastifyBaseLogger): () => void {
  let running: Promise<void> | null = null;
  let again = false;
  const run = async (): Promise<void> => {
    do {
      again = false;
      try {
        const r = await syncAlertmanagerSilences(pool, { timeoutMs: deliverySettings().timeoutMs });
        if (r.created || r.expired || r.failed) log.info(r, 'alertmanager silences synced');
      } catch (err) {
        log.warn({ err }, 'alertmanager silence sync failed; retried within a minute');
      }
    } while (again);
    running = null;
  };
  return () => {
    if (running) again = true;
    else running = run();
  };
}
