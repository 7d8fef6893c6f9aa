import { useQuery } from '@tanstack/react-query';
import { createClient, type OpArgs } from '@onset/contract';
import { ApiError, request } from '../../api/client.ts';

export type Access = {
  open: boolean;
  read: boolean | null;
  admin: boolean | null;
  reason?: string;
};

/** A request without the saved token (and no token prompt on its 401): does the server run open? */
const anonymous = createClient();

const PROBE: OpArgs<'GET /api/v1/series'> = { query: { service: '__onset_probe__' } };

/** What the current token may do, by asking the API (tokens are configured on the server by ONSET_TOKENS). */
export function useAccess(tokenVersion: number) {
  return useQuery<Access>({
    queryKey: ['access', tokenVersion],
    queryFn: async () => {
      const probe = async (ask: () => Promise<unknown>) => {
        try {
          await ask();
          return { ok: true as const };
        } catch (e) {
          if (e instanceof ApiError && (e.status === 401 || e.status === 403))
            return { ok: false as const, status: e.status, message: e.message };
          if (e instanceof ApiError && e.status === 404) return { ok: true as const };
          throw e;
        }
      };
      // Without any token: does the server run open?
      const anon = await anonymous.request('GET /api/v1/series', PROBE).then(
        () => true,
        (e: unknown) => {
          if (e instanceof ApiError && e.status !== 0) return false;
          throw e;
        },
      );
      if (anon) return { open: true, read: true, admin: true };
      const read = await probe(() => request('GET /api/v1/series', PROBE));
      const admin = await probe(() => request('GET /api/v1/webhooks', {}));
      return {
        open: false,
        read: read.ok,
        admin: admin.ok,
        reason: !read.ok ? read.message : !admin.ok ? admin.message : undefined,
      };
    },
    retry: false,
  });
}
