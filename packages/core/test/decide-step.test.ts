import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  callerFeelsGap,
  decideStep,
  detectOptionsFor,
  detectSteps,
  INCIDENT_GROWTH_MS,
  isDuplicateStep,
  isLoadRateSeries,
  type IncidentMember,
  type NearIncidentMember,
} from '../src/index.ts';

const MIN = 60_000;
const step = (over: Partial<IncidentMember> = {}): IncidentMember & { seriesId: string } => ({
  seriesId: '7',
  service: 'checkout',
  op: 'request',
  view: 'server',
  name: 'GET /cart',
  peer: '',
  onsetMs: 1000 * MIN,
  uncertaintyMs: 0,
  ratio_p50: 2,
  ratio_p99: 2,
  rollout: null,
  ...over,
});
const near = (over: Partial<NearIncidentMember>): NearIncidentMember => ({
  ...step(),
  regression_id: 'r1',
  open: true,
  ...over,
});

describe('isDuplicateStep', () => {
  const known = [{ series_id: 7, onset: new Date(1000 * MIN), unc: 0 }];
  it('is the same series within 10 minutes, or 3 × the larger uncertainty', () => {
    expect(isDuplicateStep(known, 7, 1010 * MIN, 0)).toBe(true);
    expect(isDuplicateStep(known, 7, 1011 * MIN, 0)).toBe(false);
    expect(isDuplicateStep(known, 7, 1011 * MIN, 4 * MIN)).toBe(true);
    expect(isDuplicateStep(known, 8, 1000 * MIN, 0)).toBe(false);
  });
});

describe('decideStep', () => {
  it('leaves a step already known on its series alone', () => {
    const known = [{ series_id: 7, onset: new Date(1002 * MIN), unc: 0 }];
    expect(decideStep({ step: step(), known, near: [] })).toEqual({ kind: 'duplicate' });
  });

  it("never opens on a host's own resources", () => {
    expect(decideStep({ step: step({ op: 'host' }), known: [], near: [] })).toEqual({
      kind: 'host-resource',
    });
  });

  it('joins the nearest regression of the same incident', () => {
    const far = near({ regression_id: 'far', seriesId: '1', onsetMs: 996 * MIN });
    const close = near({ regression_id: 'close', seriesId: '2', onsetMs: 999 * MIN });
    const d = decideStep({ step: step(), known: [], near: [far, close] });
    // Both are this step's incident, so they turn out to be one: the other is merged into it.
    expect(d).toEqual({ kind: 'join', incident: close, merge: ['far'] });
  });

  it('joins an open regression a later step on its series grows, not a resolved one', () => {
    const earlier = { seriesId: '7', service: 'other', onsetMs: 980 * MIN };
    const open = near({ ...earlier, regression_id: 'open' });
    expect(decideStep({ step: step(), known: [], near: [open] })).toMatchObject({
      kind: 'join',
      incident: { regression_id: 'open' },
    });
    const resolved = near({ ...earlier, regression_id: 'gone', open: false });
    expect(decideStep({ step: step(), known: [], near: [resolved] })).toEqual({
      kind: 'need',
      fact: 'hostContention',
    });
  });

  it("asks for the step's rollout when a later wave may grow an open regression", () => {
    const rollout = { deployIds: ['d1'], atMs: 1000 * MIN };
    const canary = near({
      service: 'other',
      onsetMs: 1000 * MIN - INCIDENT_GROWTH_MS - 60 * MIN,
      rollout,
    });
    const facts = { step: step(), known: [], near: [canary] };
    expect(decideStep(facts)).toEqual({ kind: 'need', fact: 'rollout' });
    expect(decideStep({ ...facts, rollout })).toEqual({
      kind: 'join',
      incident: canary,
      merge: [],
    });
    expect(decideStep({ ...facts, rollout: null })).toEqual({
      kind: 'need',
      fact: 'hostContention',
    });
  });

  it('opens a new incident, or holds it when its hosts lost CPU and no deploy explains it', () => {
    const facts = { step: step(), known: [], near: [] };
    expect(decideStep(facts)).toEqual({ kind: 'need', fact: 'hostContention' });
    expect(decideStep({ ...facts, hostContention: false })).toEqual({ kind: 'open' });
    expect(decideStep({ ...facts, hostContention: true })).toEqual({ kind: 'hold' });
  });

  it('opens a gap view’s step only when its caller feels it; it still joins its edge’s incident', () => {
    const gap = step({ view: 'gap', peer: 'api', name: 'GET /quote/{id}' });
    const facts = { step: gap, known: [], near: [] };
    expect(decideStep(facts)).toEqual({ kind: 'need', fact: 'callerFelt' });
    expect(decideStep({ ...facts, callerFelt: false })).toEqual({ kind: 'gap-unfelt' });
    expect(decideStep({ ...facts, callerFelt: true })).toEqual({
      kind: 'need',
      fact: 'hostContention',
    });
    const client = near({ view: 'client', peer: 'api', name: 'GET /quote/{id}', headline: true });
    expect(decideStep({ step: gap, known: [], near: [client] })).toMatchObject({ kind: 'join' });
  });

  it('callerFeelsGap: the client view’s per-minute median rose by the smallest reported step', () => {
    const t = Array.from({ length: 40 }, (_, i) => i * MIN);
    const at = 30 * MIN;
    const client = (after: number) => t.map((x) => (x < at ? 10 : after));
    expect(callerFeelsGap(t, client(10.8), at)).toBe(false);
    expect(callerFeelsGap(t, client(12), at)).toBe(true);
    // A later, larger change in a minority of the minutes after does not make the gap felt.
    const later = t.map((x) => (x < at ? 10 : x < 37 * MIN ? 10.5 : 35));
    expect(callerFeelsGap(t, later, at)).toBe(false);
    // Too few minutes to judge: the gap's own step decides.
    expect(callerFeelsGap(t.slice(0, 31), client(10).slice(0, 31), at)).toBe(true);
  });

  it('merges the open regressions a step turns out to link, never a far one, a resolved one or Onset’s own', () => {
    // A store ×3 found apart: on the store's server view (r1), on api's own route (r2), and api's
    // client view of the edge, now, links them (same edge as r1, same service as r2).
    const storeServer = near({
      regression_id: '11',
      seriesId: '1',
      service: 'store',
      name: 'GET /stock/',
      headline: true,
    });
    const apiRoute = near({
      regression_id: '12',
      seriesId: '2',
      service: 'api',
      name: 'GET /items/{id}',
      headline: true,
      onsetMs: 1001 * MIN,
    });
    const far = near({
      regression_id: '13',
      seriesId: '3',
      service: 'api',
      name: 'GET /quote/{id}',
      headline: true,
      onsetMs: 960 * MIN,
    });
    const clientView = step({
      seriesId: '4',
      service: 'api',
      view: 'client',
      peer: 'store',
      name: 'GET /stock/',
    });
    const d = decideStep({ step: clientView, known: [], near: [storeServer, apiRoute, far] });
    expect(d).toMatchObject({ kind: 'join', merge: [expect.any(String)] });
    const ids = d.kind === 'join' ? [d.incident.regression_id, ...d.merge].sort() : [];
    expect(ids).toEqual(['11', '12']);
    // Resolved by a person: joined, never merged; Onset's own: never either.
    const resolved = { ...apiRoute, open: false };
    expect(decideStep({ step: clientView, known: [], near: [storeServer, resolved] })).toEqual({
      kind: 'join',
      incident: storeServer,
      merge: [],
    });
    const own = { ...apiRoute, own: 'agent-probe' as const };
    expect(decideStep({ step: clientView, known: [], near: [storeServer, own] })).toEqual({
      kind: 'join',
      incident: storeServer,
      merge: [],
    });
  });
});

describe("a caller's call out to a callee deployed minutes after the caller (issue 34, polyglot)", () => {
  // api released (+25 ms on its own /quote route) at 1000; store bumped (×3) at 1008. api calls
  // store: its client view of that edge steps at 1008 too. Linked to api's release only by
  // service, it is the store's incident once its own suspect names the store's rollout.
  const apiRollout = { deployIds: ['api-1'], atMs: 1000 * MIN, service: 'api' };
  const storeRollout = { deployIds: ['store-1'], atMs: 1008 * MIN, service: 'store' };
  const apiQuote = near({
    regression_id: '21',
    seriesId: '1',
    service: 'api',
    name: 'GET /quote/{id}',
    headline: true,
    rollout: apiRollout,
  });
  const storeServer = near({
    regression_id: '22',
    seriesId: '2',
    service: 'store',
    name: 'GET /stock/{id}',
    headline: true,
    onsetMs: 1008 * MIN,
    rollout: storeRollout,
  });
  const clientView = step({
    seriesId: '3',
    service: 'api',
    view: 'client',
    peer: 'store',
    name: 'GET /stock/{id}',
    onsetMs: 1008 * MIN,
    // A gentle step on a noisy view: its onset uncertain enough to reach api's release.
    uncertaintyMs: 4 * MIN,
  });

  it('asks for its own suspect, then opens apart from the caller’s release', () => {
    const facts = { step: clientView, known: [], near: [apiQuote] };
    expect(decideStep(facts)).toEqual({ kind: 'need', fact: 'rollout' });
    expect(decideStep({ ...facts, rollout: storeRollout })).toEqual({
      kind: 'need',
      fact: 'hostContention',
    });
    // The same release, or no suspect to tell them apart: one service's incident, as before.
    for (const rollout of [apiRollout, null])
      expect(decideStep({ ...facts, rollout })).toEqual({
        kind: 'join',
        incident: apiQuote,
        merge: [],
      });
  });

  it('joins the callee’s regression and never merges the caller’s release into it', () => {
    const facts = { step: clientView, known: [], near: [apiQuote, storeServer] };
    expect(decideStep(facts)).toEqual({ kind: 'need', fact: 'rollout' });
    expect(decideStep({ ...facts, rollout: storeRollout })).toEqual({
      kind: 'join',
      incident: storeServer,
      merge: [],
    });
    // Fed the other way round (the callee's regression first): the same outcome.
    const reversed = { step: clientView, known: [], near: [storeServer, apiQuote] };
    expect(decideStep({ ...reversed, rollout: storeRollout })).toEqual({
      kind: 'join',
      incident: storeServer,
      merge: [],
    });
  });

  it('the caller’s route that makes the call joins the callee’s incident, merging nothing', () => {
    // api's /items/{id} calls the store: it steps with the store, but its own suspects are api's
    // markers only (api's release 8 minutes before fits it): they cannot tell the store's bump apart.
    const callOut = near({ ...clientView, regression_id: '22', rollout: storeRollout });
    const items = step({
      seriesId: '4',
      service: 'api',
      name: 'GET /items/{id}',
      onsetMs: 1008 * MIN,
      uncertaintyMs: 4 * MIN,
    });
    const facts = { step: items, known: [], near: [apiQuote, storeServer, callOut] };
    expect(decideStep(facts)).toEqual({ kind: 'need', fact: 'rollout' });
    expect(decideStep({ ...facts, rollout: apiRollout })).toEqual({
      kind: 'join',
      incident: callOut,
      merge: [],
    });
  });
});

/**
 * The rule's motivating series: the agent's `fsync-rate node` of the real
 * recording (apps/server/test/fixtures/recordings/2026-12-01-shared-vm):
 * time in fsync per second of all node processes, ×6 when other developers'
 * test runs started. The detector rightly finds the step; it is load, not a
 * latency, and paged as the recording's only false regression.
 */
describe('a load-rate series (real recording: fsync-rate node)', () => {
  const fx = JSON.parse(
    readFileSync(new URL('./fixtures/recording-fsync-rate-node.json', import.meta.url), 'utf8'),
  ) as {
    service: string;
    op: string;
    view: string;
    name: string;
    t0: number;
    points: Array<[number, number, number, number]>;
  };
  const points = fx.points.map(([dm, count, p50, p99]) => ({
    t: (fx.t0 + dm) * MIN,
    count,
    p50,
    p99,
  }));
  const up = detectSteps(points, detectOptionsFor(fx.view)).find(
    (c) => c.direction === 'regression',
  )!;
  const asStep = (labels: Partial<IncidentMember>) =>
    step({
      service: fx.service,
      op: fx.op,
      view: fx.view,
      name: fx.name,
      peer: '',
      onsetMs: up.t,
      uncertaintyMs: up.onsetUncertaintyPoints * MIN,
      ratio_p50: up.ratios.p50,
      ratio_p99: up.ratios.p99,
      ...labels,
    });

  it('is recognised by its name, and no route or operation is', () => {
    expect(isLoadRateSeries(fx)).toBe(true);
    expect(isLoadRateSeries({ op: 'fsync', name: 'fsync-burst /var/lib/pg_wal' })).toBe(false);
    expect(isLoadRateSeries({ op: 'request', name: 'GET /fsync-rate x' })).toBe(false);
    expect(isLoadRateSeries({ op: 'request', name: 'exchange-rate lookup' })).toBe(false);
  });

  it('has a real step up (×4 or more) that the detector reports', () => {
    expect(up).toBeDefined();
    expect(up.ratio).toBeGreaterThan(4);
  });

  it('opens nothing on its own, where a latency series with the same points would', () => {
    expect(decideStep({ step: asStep({}), known: [], near: [], hostContention: false })).toEqual({
      kind: 'load-rate',
    });
    const latency = asStep({ name: 'fsync /var/lib/app' });
    expect(decideStep({ step: latency, known: [], near: [], hostContention: false })).toEqual({
      kind: 'open',
    });
  });

  it("joins the regression its program's operation series opened", () => {
    const burst = near({
      regression_id: 'burst',
      seriesId: '3',
      service: fx.service,
      op: 'fsync',
      view: fx.view,
      name: 'fsync-burst /var/lib/pg_wal',
      onsetMs: up.t - MIN,
    });
    expect(decideStep({ step: asStep({}), known: [], near: [burst] })).toEqual({
      kind: 'join',
      incident: burst,
      merge: [],
    });
  });
});
