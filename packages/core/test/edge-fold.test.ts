import { describe, expect, it } from 'vitest';
import { edgeClientLabels, foldDecisions, isEdgeClientView, type FoldCall } from '../src/index.ts';

const call = (client: number, edge: number, more: Partial<FoldCall> = {}): FoldCall => ({
  client,
  edge,
  foldedInto: null,
  own: false,
  ...more,
});

describe('pair first, then classify: folding a caller series into its edge', () => {
  it('the edge client view carries the callee name and service under the caller', () => {
    const e = edgeClientLabels('web', 'request', 'GET /items/<int:id>', 'api');
    expect(e).toEqual({
      service: 'web',
      op: 'request',
      view: 'client',
      name: 'GET /items/<int:id>',
      peer: 'api',
    });
    expect(
      isEdgeClientView({ view: 'client', name: 'GET /items/{id}', peer: '127.0.0.1' }, e),
    ).toBe(false);
    expect(isEdgeClientView({ view: 'client', name: 'GET /items/<int:id>', peer: 'api' }, e)).toBe(
      true,
    );
    expect(isEdgeClientView({ view: 'server', name: 'GET /items/<int:id>', peer: 'api' }, e)).toBe(
      false,
    );
  });

  it('folds a series whose calls all pair with one edge, and only once', () => {
    const d = foldDecisions([call(1, 10), call(1, 10), call(2, 20)]);
    expect([...d.fold]).toEqual([
      [1, 10],
      [2, 20],
    ]);
    expect(d.refuse.size).toBe(0);
    // Already folded there (the database says so, or this pass decided it): nothing to do.
    expect(foldDecisions([call(1, 10, { foldedInto: 10 })]).fold.size).toBe(0);
    expect(foldDecisions([call(1, 10)], new Map([[1, 10]])).fold.size).toBe(0);
  });

  it('refuses a series whose calls pair with two edges, in one batch or across batches, for good', () => {
    expect([...foldDecisions([call(1, 10), call(1, 11)]).refuse]).toEqual([1]);
    expect(foldDecisions([call(1, 10), call(1, 11)]).fold.size).toBe(0);
    // Folded into 10 earlier in the pass (the cursor still reads it unfolded), now a call of edge 11.
    expect([...foldDecisions([call(1, 11)], new Map([[1, 10]])).refuse]).toEqual([1]);
    expect([...foldDecisions([call(1, 11, { foldedInto: 10 })]).refuse]).toEqual([1]);
    // Refused stays refused.
    const again = foldDecisions([call(1, 10, { foldedInto: 0 })]);
    expect(again.fold.size + again.refuse.size).toBe(0);
  });

  it('an edge client view that pairs with a second edge gives back what was folded into it', () => {
    const d = foldDecisions([call(10, 10, { own: true }), call(10, 11)]);
    expect([...d.unfoldInto]).toEqual([10]);
    expect(d.fold.size + d.refuse.size).toBe(0);
    // Its own calls alone change nothing.
    const own = foldDecisions([call(10, 10, { own: true })]);
    expect(own.fold.size + own.refuse.size + own.unfoldInto.size).toBe(0);
  });
});
