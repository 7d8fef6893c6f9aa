/**
 * Every view keeps its state in the URL query so that a link (from a page,
 * a chat message, the browser history) reopens exactly the same view.
 */
import { useCallback, useEffect, useMemo, useRef } from 'react';
import { useSearchParams } from 'react-router-dom';
import { rangeFromParams, type RangeText, DEFAULT_RANGE } from './timeRange.ts';

/** Parameters that follow the user from page to page. */
const GLOBAL_PARAMS = ['from', 'to', 'refresh', 'scale'] as const;

export type ParamPatch = Record<string, string | null | undefined>;

export function applyPatch(params: URLSearchParams, patch: ParamPatch): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === undefined || v === '') next.delete(k);
    else next.set(k, v);
  }
  return next;
}

/** A link to `path` that keeps the global params (range, refresh, scale) of `current`, plus `extra`. */
export function linkWithGlobals(
  path: string,
  current: URLSearchParams,
  extra: ParamPatch = {},
): string {
  const out = new URLSearchParams();
  for (const k of GLOBAL_PARAMS) {
    const v = current.get(k);
    if (v) out.set(k, v);
  }
  const merged = applyPatch(out, extra);
  const s = merged.toString();
  return s ? `${path}?${s}` : path;
}

export function useUrlState(): {
  params: URLSearchParams;
  get: (key: string, dflt?: string) => string;
  set: (patch: ParamPatch, opts?: { push?: boolean }) => void;
} {
  const [params, setParams] = useSearchParams();
  const get = useCallback((key: string, dflt = '') => params.get(key) ?? dflt, [params]);
  const set = useCallback(
    (patch: ParamPatch, opts: { push?: boolean } = {}) =>
      setParams((prev) => applyPatch(prev, patch), { replace: !opts.push }),
    [setParams],
  );
  return { params, get, set };
}

export function useRange(dflt: RangeText = DEFAULT_RANGE): [RangeText, (r: RangeText) => void] {
  const [params, setParams] = useSearchParams();
  const from = params.get('from');
  const to = params.get('to');
  const range = useMemo(
    () =>
      rangeFromParams(
        new URLSearchParams({ ...(from ? { from } : {}), ...(to ? { to } : {}) }),
        dflt,
      ),
    [from, to, dflt],
  );
  // A new range is a new place in history: Back undoes a zoom. The same range asked
  // twice in a row (two charts answering one gesture) is one history entry.
  const last = useRef('');
  const setRange = useCallback(
    (r: RangeText) => {
      const key = `${r.from}|${r.to}`;
      if (key === last.current) return;
      last.current = key;
      setParams((prev) => applyPatch(prev, { from: r.from, to: r.to }), { replace: false });
    },
    [setParams],
  );
  useEffect(() => {
    last.current = `${from ?? ''}|${to ?? ''}`;
  }, [from, to]);
  return [range, setRange];
}

export type Scale = 'log' | 'linear';

export function useScale(): [Scale, (s: Scale) => void] {
  const { get, set } = useUrlState();
  const scale: Scale = get('scale') === 'linear' ? 'linear' : 'log';
  return [scale, (s: Scale) => set({ scale: s === 'log' ? null : s })];
}
