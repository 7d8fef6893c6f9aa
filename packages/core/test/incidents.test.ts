import { describe, expect, it } from 'vitest';
import {
  apartByRollout,
  compareSteps,
  growsIncident,
  headlineIndex,
  mayGrowByRollout,
  mayMerge,
  onsetOwnOf,
  sameEdge,
  sameIncident,
  stepJoins,
  INCIDENT_WINDOW_MAX_MS,
  type IncidentMember,
} from '../src/index.ts';

const MIN = 60_000;
const m = (over: Partial<IncidentMember>): IncidentMember => ({
  service: 'checkout',
  op: 'request',
  view: 'client',
  name: 'GET /lookup',
  peer: 'urlite',
  onsetMs: 100 * MIN,
  uncertaintyMs: 0,
  ratio_p50: 2,
  ratio_p99: 2,
  ...over,
});

describe('one incident', () => {
  it('groups the client, gap and server views of one edge, and the callee’s own server series', () => {
    const client = m({});
    const gap = m({ view: 'gap', onsetMs: 101 * MIN });
    const server = m({ view: 'server' });
    const own = m({ service: 'urlite', view: 'server', peer: null, onsetMs: 99 * MIN });
    for (const x of [gap, server, own]) expect(sameIncident(client, x)).toBe(true);
    expect(sameIncident(own, gap)).toBe(true);
  });

  it('groups several series of one service stepping within minutes', () => {
    const a = m({ service: 'api', view: 'server', peer: null, name: 'GET /a' });
    const b = m({
      service: 'api',
      view: 'server',
      peer: null,
      name: 'POST /b',
      onsetMs: 103 * MIN,
    });
    const spawn = m({ service: 'api', op: 'spawn', view: 'internal', peer: null, name: 'cc' });
    expect(sameIncident(a, b)).toBe(true);
    expect(sameIncident(a, spawn)).toBe(true);
  });

  it('keeps unrelated services apart, even in the same minute', () => {
    const a = m({ service: 'api', view: 'server', peer: null, name: 'GET /a' });
    const b = m({ service: 'billing', view: 'server', peer: null, name: 'GET /a' });
    expect(sameIncident(a, b)).toBe(false);
    // Two callers of one callee are not one edge, nor two own-server series of different callees.
    expect(sameEdge(m({}), m({ service: 'cart' }))).toBe(false);
    expect(
      sameEdge(
        m({ service: 'x', peer: null, view: 'server' }),
        m({ service: 'y', peer: null, view: 'server' }),
      ),
    ).toBe(false);
    // A different route of the callee is another edge.
    expect(sameIncident(m({}), m({ service: 'cart', name: 'GET /other' }))).toBe(false);
  });

  it('keeps steps apart when their onsets are further apart than the window', () => {
    expect(sameIncident(m({}), m({ view: 'gap', onsetMs: 106 * MIN }))).toBe(false);
    // Uncertain onsets widen the window, up to its cap.
    expect(
      sameIncident(m({ uncertaintyMs: 3 * MIN }), m({ view: 'gap', onsetMs: 107 * MIN })),
    ).toBe(true);
    expect(
      sameIncident(
        m({ uncertaintyMs: 60 * MIN }),
        m({ view: 'gap', onsetMs: 100 * MIN + INCIDENT_WINDOW_MAX_MS + MIN }),
      ),
    ).toBe(false);
  });

  it('a later step on a series of the incident, within 30 minutes, grows it', () => {
    const first = m({ seriesId: '7' });
    expect(growsIncident(first, m({ seriesId: '7', onsetMs: 120 * MIN }))).toBe(true);
    expect(growsIncident(first, m({ seriesId: '7', onsetMs: 131 * MIN }))).toBe(false);
    expect(growsIncident(first, m({ seriesId: '7', onsetMs: 90 * MIN }))).toBe(false);
    expect(growsIncident(first, m({ seriesId: '8', onsetMs: 120 * MIN }))).toBe(false);
    expect(growsIncident(m({}), m({ onsetMs: 120 * MIN }))).toBe(false);
  });

  it('grows by a later wave of the same rollout hours after its canary, not by another rollout', () => {
    const canary = m({ seriesId: '7', rollout: { deployIds: ['11', '12'], atMs: 100 * MIN } });
    const wave = (ids: string[], atMin: number, onsetMin = 190) =>
      m({ seriesId: '7', onsetMs: onsetMin * MIN, rollout: { deployIds: ids, atMs: atMin * MIN } });
    // 90 minutes later: the rest of the fleet, a marker of the same rollout reaching the series at the onset.
    expect(mayGrowByRollout(canary, wave([], 0))).toBe(true);
    expect(growsIncident(canary, wave(['13', '11'], 189))).toBe(true);
    // The detected onset 5 minutes after the wave (no uncertainty given): still that wave.
    expect(growsIncident(canary, wave(['11'], 185))).toBe(true);
    // Another rollout (no marker in common), or the same one that did not reach the series then.
    expect(growsIncident(canary, wave(['14'], 189))).toBe(false);
    expect(growsIncident(canary, wave(['13', '11'], 150))).toBe(false);
    // Without a suspect on either side, past 30 minutes, on another series, or past the marker lookback.
    expect(growsIncident(m({ seriesId: '7' }), wave(['11'], 189))).toBe(false);
    expect(growsIncident(canary, m({ seriesId: '7', onsetMs: 190 * MIN }))).toBe(false);
    expect(growsIncident(canary, { ...wave(['11'], 189), seriesId: '8' })).toBe(false);
    expect(growsIncident(canary, wave(['11'], 100 + 6 * 60 + 1, 100 + 6 * 60 + 1))).toBe(false);
    expect(mayGrowByRollout(m({ seriesId: '7' }), wave([], 0))).toBe(false);
    expect(mayGrowByRollout(canary, wave([], 0, 120))).toBe(false); // within 30 minutes: grows anyway
  });

  it('heads an incident with the member that shows the step best', () => {
    expect(
      headlineIndex([m({ ratio_p50: 9, ratio_p99: 8 }), m({ ratio_p50: 45, ratio_p99: 30 })]),
    ).toBe(1);
    expect(headlineIndex([m({ ratio_p50: 3 }), m({ ratio_p50: 3 })])).toBe(0);
    expect(headlineIndex([])).toBe(-1);
  });
});

describe('grouping whatever the order (issue 34)', () => {
  it('a gap view joins only the views of its own edge, not another series of its caller', () => {
    // api → store: the store's server view, api's client and gap views of that edge.
    const storeServer = m({ service: 'store', view: 'server', peer: null, name: 'GET /stock/' });
    const gap = m({ service: 'api', view: 'gap', peer: 'store', name: 'GET /stock/' });
    const apiRoute = m({ service: 'api', view: 'server', peer: null, name: 'GET /items/{id}' });
    // A small step in another gap of the same caller (its machine's load).
    const otherGap = m({ service: 'api', view: 'gap', peer: 'auth', name: 'POST /token' });
    expect(sameIncident(gap, storeServer)).toBe(true);
    expect(sameIncident(gap, apiRoute)).toBe(false);
    expect(sameIncident(gap, otherGap)).toBe(false);
    expect(sameIncident(otherGap, storeServer)).toBe(false);
    // The caller's own route and its client view of the edge are still one service's.
    expect(sameIncident(apiRoute, m({ service: 'api', name: 'GET /stock/', peer: 'store' }))).toBe(
      true,
    );
  });

  it('links series of one service only while their suspects name no different rollouts', () => {
    const apiRoute = m({ service: 'api', view: 'server', peer: null, name: 'GET /quote/{id}' });
    const call = m({ service: 'api', view: 'client', peer: 'store', name: 'GET /stock/{id}' });
    const storeServer = m({
      service: 'store',
      view: 'server',
      peer: null,
      name: 'GET /stock/{id}',
    });
    const api = { deployIds: ['api-1', 'api-2'], atMs: 100 * MIN, service: 'api' };
    const store = { deployIds: ['store-1'], atMs: 100 * MIN, service: 'store' };
    expect(stepJoins({ ...apiRoute, rollout: api }, { ...call, rollout: store })).toBe(false);
    expect(stepJoins({ ...apiRoute, rollout: api }, { ...call, rollout: null })).toBe(true);
    expect(
      stepJoins(
        { ...apiRoute, rollout: api },
        { ...call, rollout: { ...api, deployIds: ['api-2'] } },
      ),
    ).toBe(true);
    // A release 25 minutes before a step (a route's only candidate) names nothing: no split.
    const old = { ...api, atMs: 75 * MIN };
    expect(stepJoins({ ...apiRoute, rollout: old }, { ...call, rollout: store })).toBe(true);
    // A route of the caller weighs only the caller's markers: the store's bump it cannot tell apart.
    expect(stepJoins({ ...call, rollout: store }, { ...apiRoute, rollout: api })).toBe(true);
    // Views of one edge stay one incident whatever their suspects (a wrong one is re-attributed).
    expect(stepJoins({ ...storeServer, rollout: store }, { ...call, rollout: api })).toBe(true);
  });

  it('a caller’s release minutes before the onset and its callee’s bump at it are one incident, the bump’s', () => {
    const apiRoute = m({ service: 'api', view: 'server', peer: null, name: 'GET /items/{id}' });
    const call = m({ service: 'api', view: 'client', peer: 'store', name: 'GET /stock/{id}' });
    const early = { deployIds: ['api-2'], atMs: 92 * MIN, service: 'api' };
    const bump = { deployIds: ['store-5'], atMs: 101 * MIN, service: 'store' };
    // The route's regression names the release (a fit of 0.78); the call's step names the bump (1).
    expect(stepJoins({ ...apiRoute, rollout: early }, { ...call, rollout: bump })).toBe(true);
    expect(apartByRollout({ ...apiRoute, rollout: early }, { ...call, rollout: bump })).toBe(false);
    // A release at the onset and a bump 5 minutes later: each fits its own onset best, two incidents.
    const atOnset = { ...early, atMs: 100 * MIN };
    const later = { ...call, onsetMs: 105 * MIN, rollout: { ...bump, atMs: 105 * MIN } };
    expect(stepJoins({ ...apiRoute, rollout: atOnset }, later)).toBe(false);
    expect(apartByRollout({ ...apiRoute, rollout: atOnset }, later)).toBe(true);
  });

  it("keeps Onset's own noise out of every other incident", () => {
    const probe = m({
      service: 'onset-agent',
      op: 'unmount',
      view: 'internal',
      peer: null,
      name: '/var/tmp/onset-agent/mnt',
      own: 'agent-probe',
    });
    const exe = m({
      service: 'onset-agent',
      op: 'spawn',
      view: 'internal',
      peer: null,
      name: 'cc',
    });
    const wal = m({
      service: 'postgres',
      op: 'fsync',
      view: 'internal',
      peer: null,
      name: '/home/u/.onset/pg/pg_wal',
      own: 'onset-database',
    });
    expect(sameIncident(probe, exe)).toBe(false);
    expect(sameIncident(wal, m({ service: 'postgres', op: 'fsync', peer: null }))).toBe(false);
    expect(sameIncident(probe, wal)).toBe(false);
    expect(sameIncident(probe, { ...probe, name: '/var/tmp/onset-agent/other' })).toBe(true);
    expect(mayMerge(probe, exe)).toBe(false);
  });

  it('orders a batch by onset, then by how clearly each step shows, never by series id', () => {
    const steps = [
      m({ seriesId: '1', view: 'gap', ratio_p50: 1.3, ratio_p99: 1.4 }),
      m({ seriesId: '2', view: 'server', ratio_p50: 3, ratio_p99: 2.9 }),
      m({ seriesId: '3', view: 'client', ratio_p50: 2.2, ratio_p99: 2 }),
    ];
    const order = (xs: IncidentMember[]) => [...xs].sort(compareSteps).map((x) => x.view);
    expect(order(steps)).toEqual(['server', 'client', 'gap']);
    expect(order([...steps].reverse())).toEqual(['server', 'client', 'gap']);
    // A series' earlier step first, however clearer its later one: the later one grows the incident.
    const canary = m({ seriesId: '9', onsetMs: 90 * MIN, ratio_p50: 1.5, ratio_p99: 1.5 });
    const rest = m({ seriesId: '9', onsetMs: 110 * MIN, ratio_p50: 9, ratio_p99: 9 });
    expect([rest, canary].sort(compareSteps)).toEqual([canary, rest]);
  });
});

describe("Onset's own noise", () => {
  const dirs = ['/home/u/.onset/pg'];
  it('is the agent’s probe when its spans say so, Onset’s database when under its directory', () => {
    expect(onsetOwnOf({ name: '/mnt/x' }, [{ 'onset.source': 'probe' }], dirs)).toBe('agent-probe');
    expect(onsetOwnOf({ name: '/home/u/.onset/pg/pg_wal' }, [], dirs)).toBe('onset-database');
    expect(
      onsetOwnOf(
        { name: 'fsync-rate postgres' },
        [{ 'file.directory': '/home/u/.onset/pg' }],
        dirs,
      ),
    ).toBe('onset-database');
    expect(onsetOwnOf({ name: '/var/lib/postgresql/15/main/pg_wal' }, [null], dirs)).toBeNull();
    expect(onsetOwnOf({ name: '/home/u/.onset/pgx' }, [{ 'onset.source': 'bpftrace' }], dirs)).toBe(
      null,
    );
  });
});
