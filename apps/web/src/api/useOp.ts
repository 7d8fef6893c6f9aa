/**
 * The one wrapper around TanStack Query: every read of the API is `useOp(key, args, options)`
 * and every write `useOpMutation(key, options)`, with the contract's types. The query key
 * starts with the resource (`regressions`, `slos`, …: the path's first segment after
 * /api/v1/) and then the operation, so a mutation invalidates all of a resource by prefix.
 */
import {
  keepPreviousData,
  useMutation,
  useQuery,
  useQueryClient,
  type QueryClient,
  type UseQueryOptions,
} from '@tanstack/react-query';
import { useSearchParams } from 'react-router-dom';
import type { GetOperationKey, OperationKey, OpArgs, OpResponse } from '@onset/contract';
import { ApiError, request } from './client.ts';
import { rangeFromParams, refreshInterval } from '../state/timeRange.ts';

/** The auto-refresh interval chosen in the URL (`refresh=30s|1m|off`). */
export function useRefetchInterval(): number | false {
  const [params] = useSearchParams();
  return refreshInterval(params.get('refresh'), rangeFromParams(params));
}

/** Retried twice, except when the server refused (4xx): asking again will not help. */
export const retry = (n: number, e: unknown) =>
  !(e instanceof ApiError && e.status >= 400 && e.status < 500) && n < 2;

/** Whose data an operation is: the first path segment after /api/v1/ (`series`, `slos`, …). */
export function resourceOf(key: OperationKey): string {
  const path = key.slice(key.indexOf(' ') + 1);
  return path.replace(/^\/api\/v1\//, '').split('/')[0]!;
}

/** The query key of an operation (with `args`, one cached answer; without, all of them). */
export function opKey<K extends GetOperationKey>(key: K, args?: OpArgs<K>): readonly unknown[] {
  return args === undefined ? [resourceOf(key), key] : [resourceOf(key), key, args];
}

/** How a view refreshes: with the page's interval (default), a function of it, or never. */
export type Refresh = 'page' | 'never' | ((pageInterval: number | false) => number | false);

export interface OpOptions<K extends GetOperationKey, T> {
  enabled?: boolean;
  /** Shape the answer (e.g. the list inside the envelope); the cache keeps the answer. */
  select?: (answer: OpResponse<K>) => T;
  refresh?: Refresh;
  /** A function of the current answer: overrides `refresh` (e.g. poll while pending). */
  refetchInterval?: (answer: OpResponse<K> | undefined) => number | false;
  /** Keep showing the previous answer while a new range loads (default true). */
  keepPrevious?: boolean;
  staleTime?: number;
  /** Tens of thousands of points: comparing old and new deeply costs more than redrawing. */
  structuralSharing?: boolean;
}

/** The TanStack Query options of a read, for `useQuery` and `useQueries` alike. */
export function opQuery<K extends GetOperationKey, T = OpResponse<K>>(
  key: K,
  args: OpArgs<K>,
  options: OpOptions<K, T>,
  pageInterval: number | false,
): UseQueryOptions<OpResponse<K>, Error, T> {
  const refresh = options.refresh ?? 'page';
  const interval =
    refresh === 'page' ? pageInterval : refresh === 'never' ? false : refresh(pageInterval);
  const rf = options.refetchInterval;
  return {
    queryKey: opKey(key, args),
    queryFn: ({ signal }) => request(key, args, { signal }),
    enabled: options.enabled,
    select: options.select,
    refetchInterval: rf ? (q) => rf(q.state.data) : interval,
    retry,
    ...(options.keepPrevious === false ? {} : { placeholderData: keepPreviousData }),
    ...(options.staleTime === undefined ? {} : { staleTime: options.staleTime }),
    ...(options.structuralSharing === false ? { structuralSharing: false } : {}),
  };
}

/** A read of the API, typed from the contract, refreshed with the page. */
export function useOp<K extends GetOperationKey, T = OpResponse<K>>(
  key: K,
  args: OpArgs<K>,
  options: OpOptions<K, T> = {},
) {
  const interval = useRefetchInterval();
  return useQuery(opQuery(key, args, options, interval));
}

/** What a change makes stale: whole resources (`'slos'`) or single reads (`opKey(...)`). */
export type Stale = ReadonlyArray<string | readonly unknown[]>;

export function invalidate(qc: QueryClient, stale: Stale): Promise<void> {
  return Promise.all(
    stale.map((s) => qc.invalidateQueries({ queryKey: typeof s === 'string' ? [s] : s })),
  ).then(() => undefined);
}

/**
 * A write of the API: `run` calls `request(...)` (so its answer is typed from the contract),
 * and what it makes stale is invalidated once it settles (or, `onSuccessOnly`, succeeds);
 * with `awaitStale` the mutation ends only when the stale reads are fetched again.
 */
export function useOpMutation<V, T>(
  run: (vars: V) => Promise<T>,
  options: { stale: Stale; onSuccessOnly?: boolean; awaitStale?: boolean },
) {
  const qc = useQueryClient();
  const after = () => {
    const done = invalidate(qc, options.stale);
    if (options.awaitStale) return done;
    void done;
  };
  return useMutation({
    mutationFn: run,
    ...(options.onSuccessOnly ? { onSuccess: after } : { onSettled: after }),
  });
}
