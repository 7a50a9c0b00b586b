import { LRUCache } from 'lru-cache';
import { principalOf } from '../auth/principal.js';
import type { AuthContext, BindingState, SessionBindings } from '../decision/index.js';
import { keyedDigest, sessionBindingKey } from '../cache/cache-keys.js';
import type { CacheStore } from '../cache/store.js';
import type { SessionSettings } from '../config/types.js';
import { perObject } from '../lib/memo.js';

export interface SessionBindingDeps {
  readonly store: CacheStore;
  readonly keySecret: Buffer;
  /** With Redis: the bindings this replica has seen, shared by every route and config (reloads keep them). */
  readonly seenSessions?: SeenSessions;
}

/**
 * Owner digests of the session bindings one replica has seen, by binding key (an HMAC of route and session id: the
 * id is never held), each until `sessions.idle_ttl` after its last use here. A binding never changes owner once
 * made, so this replica can keep serving the sessions it knows while Redis stalls or fails over.
 */
export type SeenSessions = LRUCache<string, string>;

export interface SeenSessionsOptions {
  /** Most bindings remembered (`cache.memory.sessions`); the least recently used go first. */
  readonly max: number;
  readonly onEvict?: () => void;
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

export function createSeenSessions(options: SeenSessionsOptions): SeenSessions {
  return new LRUCache<string, string>({
    max: options.max,
    ...(options.now && { perf: { now: options.now } }),
    // Read the clock on every check: a binding idle for idle_ttl is gone, even by 1 ms.
    ttlResolution: 0,
    ...(options.onEvict && { dispose: (_value, _key, reason) => reason === 'evict' && options.onEvict?.() }),
  });
}

/**
 * Session bindings of one route in the cache store (Redis across replicas): key = HMAC(route, session id),
 * value = HMAC(issuer, subject, client id). Neither the session id nor the identity is stored readable.
 *
 * Redis decides whenever it answers (a binding another replica released or rebound counts at once). When a read
 * gets no answer (stall, failover), a binding this replica has seen (`seenSessions`) decides instead of a 503, for
 * at most `idle_ttl` after its last use here; it lets its owner in and nobody else.
 */
export function createSessionBindings(route: string, settings: SessionSettings, deps: SessionBindingDeps): SessionBindings {
  const key = (sessionId: string) => sessionBindingKey(deps.keySecret, route, sessionId);
  const { seenSessions } = deps;
  // Memoised: a session check on a known caller then costs one HMAC (the binding key).
  const owner = perObject((auth: AuthContext) => keyedDigest(deps.keySecret, ['session-owner', ...principalOf(auth)]));
  const remember = (bindingKey: string, bound: string) => seenSessions?.set(bindingKey, bound, { ttl: settings.idleTtl });

  /** No answer from the store: what this replica has seen decides, else nobody is let in. */
  function fromSeen(bindingKey: string, caller: string): BindingState {
    const seen = seenSessions?.get(bindingKey);
    if (seen === undefined) return 'unavailable';
    if (seen !== caller) return 'foreign';
    remember(bindingKey, seen);
    return 'owned';
  }

  async function check(sessionId: string, auth: AuthContext): Promise<BindingState> {
    const bindingKey = key(sessionId);
    const caller = owner(auth);
    const bound = await deps.store.lookup(bindingKey);
    if (bound.kind === 'unavailable') return fromSeen(bindingKey, caller);
    if (bound.kind === 'absent' || bound.value !== caller) {
      // Released, expired or rebound elsewhere: Redis's answer stands here too.
      seenSessions?.delete(bindingKey);
      return bound.kind === 'absent' ? 'unknown' : 'foreign';
    }
    // Sliding expiry; a lost refresh only shortens the binding's life, so it is not awaited.
    void deps.store.set(bindingKey, bound.value, settings.idleTtl);
    remember(bindingKey, bound.value);
    return 'owned';
  }

  return {
    check,
    async bind(sessionId, auth) {
      const bindingKey = key(sessionId);
      const stored = await deps.store.set(bindingKey, owner(auth), settings.idleTtl);
      // Only a binding Redis took: one it did not could be taken by another replica's claim meanwhile.
      if (stored) remember(bindingKey, owner(auth));
      return stored;
    },
    async claim(sessionId, auth) {
      const bindingKey = key(sessionId);
      if (await deps.store.setIfAbsent(bindingKey, owner(auth), settings.idleTtl)) {
        remember(bindingKey, owner(auth));
        return 'owned';
      }
      return check(sessionId, auth);
    },
    async release(sessionId) {
      const bindingKey = key(sessionId);
      seenSessions?.delete(bindingKey);
      await deps.store.delete(bindingKey);
    },
  };
}
