/**
 * The Explorer's pickers: from the series list and the URL's partial choice
 * (service, op, view, name, peer), which options each picker offers and which
 * single series (if any) the choice designates. Pure; unit-tested.
 */
import type { Series } from '@onset/contract';

export interface Selection {
  service?: string;
  op?: string;
  view?: string;
  name?: string;
  peer?: string;
}

export interface SelectionOptions {
  services: string[];
  ops: string[];
  views: string[];
  names: string[];
  peers: string[];
  /** Series matching every choice made so far. */
  candidates: Series[];
  /** The one series the choice designates, or null while it is ambiguous. */
  match: Series | null;
}

const uniq = (xs: Iterable<string>) => [...new Set(xs)].sort((a, b) => a.localeCompare(b));

export function selectionOptions(all: readonly Series[], sel: Selection): SelectionOptions {
  const bySvc = all.filter((s) => !sel.service || s.service === sel.service);
  const byOp = bySvc.filter((s) => !sel.op || s.op === sel.op);
  const byView = byOp.filter((s) => !sel.view || s.view === sel.view);
  const byName = byView.filter((s) => !sel.name || s.name === sel.name);
  const candidates = byName.filter(
    (s) => sel.peer === undefined || sel.peer === '' || (s.peer ?? '') === sel.peer,
  );
  return {
    services: uniq(all.map((s) => s.service)),
    ops: uniq(bySvc.map((s) => s.op)),
    views: uniq(byOp.map((s) => s.view)),
    names: uniq(byView.map((s) => s.name)),
    peers: uniq(byName.map((s) => s.peer ?? '')),
    candidates,
    // One candidate left: that is the series, even if not every picker was set.
    match: candidates.length === 1 ? candidates[0]! : null,
  };
}

/** The URL choice that designates exactly this series. */
export function selectionOf(s: Series): Required<Selection> {
  return { service: s.service, op: s.op, view: s.view, name: s.name, peer: s.peer ?? '' };
}

/**
 * When one picker changes, drop the later choices that no longer exist so the
 * user is never left with an impossible combination.
 */
export function changeSelection(
  all: readonly Series[],
  sel: Selection,
  key: keyof Selection,
  value: string,
): Selection {
  const order: Array<keyof Selection> = ['service', 'op', 'view', 'name', 'peer'];
  const next: Selection = { ...sel, [key]: value || undefined };
  for (const k of order.slice(order.indexOf(key) + 1)) {
    const v = next[k];
    if (v === undefined) continue;
    const opts = selectionOptions(all, { ...next, [k]: undefined });
    const list =
      k === 'service'
        ? opts.services
        : k === 'op'
          ? opts.ops
          : k === 'view'
            ? opts.views
            : k === 'name'
              ? opts.names
              : opts.peers;
    if (!list.includes(v)) next[k] = undefined;
  }
  return next;
}
