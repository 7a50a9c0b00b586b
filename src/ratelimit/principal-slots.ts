import type { AuthContext, PrincipalSlots } from '../decision/index.js';
import { perObject } from '../lib/memo.js';

/**
 * Whose slots count together: a user (issuer and subject) through every client, since a user who registers
 * clients dynamically would otherwise get the cap once per client; a client acting for itself (no subject) on its
 * own (issuer and client id).
 */
function capHolder(auth: AuthContext): string {
  return JSON.stringify(
    auth.subject === undefined ? [auth.issuer, 'client', auth.clientId ?? ''] : [auth.issuer, 'subject', auth.subject],
  );
}

/**
 * Slots per principal on this process, for what one caller may hold at once: standalone SSE streams
 * (`limits.max_streams_per_principal`) and requests in flight at the upstream
 * (`limits.max_concurrent_requests_per_principal`), so one caller cannot hold every socket and upstream stream of
 * the gateway. Counts live in this process only; with several replicas a cap applies per replica (a cross-replica
 * count would need leases that survive a crash).
 */
export function createPrincipalSlots(): PrincipalSlots {
  const counts = new Map<string, number>();
  const keyOf = perObject(capHolder);
  return {
    acquire(auth, max) {
      const key = keyOf(auth);
      const open = counts.get(key) ?? 0;
      if (open >= max) return undefined;
      counts.set(key, open + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const remaining = (counts.get(key) ?? 1) - 1;
        if (remaining <= 0) counts.delete(key);
        else counts.set(key, remaining);
      };
    },
    open: (auth) => counts.get(keyOf(auth)) ?? 0,
  };
}
