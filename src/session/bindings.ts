import { principalOf } from '../auth/principal.js';
import type { AuthContext } from '../auth/types.js';
import { keyedDigest, sessionBindingKey } from '../cache/cache-keys.js';
import type { CacheStore } from '../cache/store.js';
import type { SessionSettings } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { perObject } from '../memo.js';

/**
 * What the store says about a session id for this caller: bound to them (`owned`), bound to someone else
 * (`foreign`), not bound at all (`unknown`), or the store could not answer (`unavailable`).
 */
export type BindingState = 'owned' | 'foreign' | 'unknown' | 'unavailable';

export interface SessionBindings {
  /** Looks the binding up; an owned binding's idle TTL starts again. */
  check(sessionId: string, auth: AuthContext): Promise<BindingState>;
  /** Binds a session id the upstream just issued to the caller that opened it; false when the store did not take it. */
  bind(sessionId: string, auth: AuthContext): Promise<boolean>;
  /**
   * Binds a session id nobody holds yet to this caller, atomically (one claimant wins across replicas), and says
   * whose it is now. For front doors that never see the upstream's initialize answer.
   */
  claim(sessionId: string, auth: AuthContext): Promise<BindingState>;
  release(sessionId: string): Promise<void>;
}

export interface SessionBindingDeps {
  readonly store: CacheStore;
  readonly keySecret: Buffer;
}

/**
 * Session bindings of one route in the cache store (Redis across replicas): key = HMAC(route, session id),
 * value = HMAC(issuer, subject, client id). Neither the session id nor the identity is stored readable.
 */
export function createSessionBindings(route: string, settings: SessionSettings, deps: SessionBindingDeps): SessionBindings {
  const key = (sessionId: string) => sessionBindingKey(deps.keySecret, route, sessionId);
  // Memoised: a session check on a known caller then costs one HMAC (the binding key). Who owns a session is
  // still read from the store every time, so an unbind on another replica counts at once.
  const owner = perObject((auth: AuthContext) => keyedDigest(deps.keySecret, ['session-owner', ...principalOf(auth)]));
  async function check(sessionId: string, auth: AuthContext): Promise<BindingState> {
    const bindingKey = key(sessionId);
    const bound = await deps.store.get(bindingKey);
    if (bound === undefined) return deps.store.status().state === 'ready' ? 'unknown' : 'unavailable';
    if (bound !== owner(auth)) return 'foreign';
    // Sliding expiry; a lost refresh only shortens the binding's life, so it is not awaited.
    void deps.store.set(bindingKey, bound, settings.idleTtl);
    return 'owned';
  }

  return {
    check,
    bind: (sessionId, auth) => deps.store.set(key(sessionId), owner(auth), settings.idleTtl),
    async claim(sessionId, auth) {
      if (await deps.store.setIfAbsent(key(sessionId), owner(auth), settings.idleTtl)) return 'owned';
      return check(sessionId, auth);
    },
    async release(sessionId) {
      await deps.store.delete(key(sessionId));
    },
  };
}

/**
 * The gateway's answer to a request carrying a session id (fail closed): only the owner passes. A foreign and an
 * unknown session read the same (404, as MCP servers answer expired sessions; clients then re-initialize), so the
 * answer is no oracle of other users' sessions, and a lost binding cannot be claimed by whoever presents the id
 * first. A store that cannot answer is a 503: the session is not declared dead, and nobody else gets in.
 */
export function bindingDecision(state: BindingState): GatewayError | undefined {
  switch (state) {
    case 'owned':
      return undefined;
    case 'foreign':
      return new GatewayError('session_not_found', { reason: 'session_bound_to_other_principal' });
    case 'unknown':
      return new GatewayError('session_not_found', { reason: 'session_not_bound' });
    case 'unavailable':
      return new GatewayError('auth_unavailable', { reason: 'session_store_unavailable' });
  }
}
