import { useQuery } from '@tanstack/react-query';
import { ApiError, apiFetch } from '../../api/client.ts';

export type Access = {
  open: boolean;
  read: boolean | null;
  admin: boolean | null;
  reason?: string;
};

/** What the current token may do, by asking the API (tokens are configured on the server by ONSET_TOKENS). */
export function useAccess(tokenVersion: number) {
  return useQuery<Access>({
    queryKey: ['access', tokenVersion],
    queryFn: async () => {
      const probe = async (path: string) => {
        try {
          await apiFetch(path);
          return { ok: true as const };
        } catch (e) {
          if (e instanceof ApiError && (e.status === 401 || e.status === 403))
            return { ok: false as const, status: e.status, message: e.message };
          if (e instanceof ApiError && e.status === 404) return { ok: true as const };
          throw e;
        }
      };
      // Without any token: does the server run open?
      const anon = await fetch('/api/v1/series?service=__onset_probe__', {
        headers: { Accept: 'application/json' },
      });
      if (anon.ok) return { open: true, read: true, admin: true };
      const read = await probe('/api/v1/series?service=__onset_probe__');
      const admin = await probe('/api/v1/webhooks');
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
