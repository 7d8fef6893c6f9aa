/**
 * Asking the server for a deploy's verdict: find the marker (by id or by its
 * fields), then GET /api/v1/deploys/{id}/verdict, holding with `?wait=` until
 * the verdict is decided or the caller's wait runs out.
 */
import {
  VERDICT_MAX_WAIT_MS,
  type Deploy,
  type DeployKind,
  type Verdict,
  type VerdictQuery,
} from '@onset/contract';
import { requestOp, type ClientOptions } from '../deploy/client.ts';

/** The marker fields a deploy can be found by when its id is not at hand. */
export interface MarkerMatch {
  service?: string;
  environment?: string;
  kind?: DeployKind;
  toVersion?: string;
  commit?: string;
  externalId?: string;
}

/** No marker matches the fields given. */
export class NoMarkerError extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The newest marker matching every given field (the list API filters service and kind; the rest here). */
export async function findMarker(match: MarkerMatch, opts: ClientOptions): Promise<Deploy> {
  const { body } = await requestOp(
    'GET /api/v1/deploys',
    {
      query: {
        limit: 5000,
        from: 'now-30d',
        ...(match.service ? { service: match.service } : {}),
        ...(match.kind ? { kind: match.kind } : {}),
      },
    },
    { what: 'the marker lookup' },
    opts,
  );
  const found = body.deploys
    .filter(
      (d) =>
        (!match.environment || d.environment === match.environment) &&
        (!match.toVersion || d.to_version === match.toVersion) &&
        (!match.commit || (d.commit ?? '').startsWith(match.commit)) &&
        (!match.externalId || d.external_id === match.externalId),
    )
    .sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
  if (!found.length) {
    const said = Object.entries(match)
      .filter(([, v]) => v)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    throw new NoMarkerError(`no deploy marker in the last 30 days matches ${said}`);
  }
  return found[0]!;
}

export type Thresholds = Pick<VerdictQuery, 'window' | 'p50_ratio' | 'p99_ratio' | 'min_count'>;

/** Whole seconds, as the API's duration grammar takes them. */
const seconds = (ms: number) => `${Math.max(1, Math.ceil(ms / 1000))}s`;

/**
 * The verdict of deploy `id`: asked once at once; while it is pending and
 * waitMs has not passed, asked again with the server holding each request
 * (`?wait=`, at most VERDICT_MAX_WAIT_MS) until it is decided. A pending
 * answer after the wait is returned as it is.
 */
export async function awaitVerdict(
  id: string,
  thresholds: Thresholds,
  waitMs: number,
  opts: ClientOptions,
  onPending: (v: Verdict, leftMs: number) => void = () => {},
): Promise<Verdict> {
  const deadline = Date.now() + waitMs;
  const ask = async (holdMs: number) => {
    const { body } = await requestOp(
      'GET /api/v1/deploys/:id/verdict',
      {
        params: { id },
        query: { ...(holdMs > 0 ? { wait: seconds(holdMs) } : {}), ...thresholds },
      },
      { what: 'the verdict request', holdMs },
      opts,
    );
    return body;
  };
  let v = await ask(0);
  if (v.verdict === 'pending' && deadline > Date.now()) onPending(v, deadline - Date.now());
  while (v.verdict === 'pending') {
    const left = deadline - Date.now();
    if (left <= 0) return v;
    const asked = Date.now();
    v = await ask(Math.min(left, VERDICT_MAX_WAIT_MS));
    // A server that answers pending early (a restart, a proxy's timeout) is asked again, not hammered.
    if (v.verdict === 'pending' && Date.now() - asked < 1000)
      await sleep(Math.min(2000, Math.max(0, deadline - Date.now())));
  }
  return v;
}
