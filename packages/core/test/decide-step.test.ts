import { describe, expect, it } from 'vitest';
import {
  decideStep,
  INCIDENT_GROWTH_MS,
  isDuplicateStep,
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
    expect(d).toEqual({ kind: 'join', incident: close });
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
    expect(decideStep({ ...facts, rollout })).toEqual({ kind: 'join', incident: canary });
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
});
