/**
 * Counters of token-verification events. The metrics module adapts a registry onto this interface; the in-memory
 * implementation serves tests and `snapshot()`. Reasons are fixed strings chosen by the caller (bounded metric
 * labels), never input.
 */
export interface AuthCounters {
  /** A positive introspection answer served from the cache. */
  cacheHit(): void;
  /** Not in the cache: the answer comes (or came, for a coalesced request) from the AS. */
  cacheMiss(): void;
  /** A cached `active: false` answer. */
  negativeHit(): void;
  /** One request sent to the introspection endpoint. */
  asCall(): void;
  /** The gateway could not get a usable answer (→ 503). */
  asError(reason: string): void;
  /** One JWKS fetch finished; a failure carries its reason (a JwksFailure). */
  jwksRefresh?(result: 'success' | 'failure', reason?: string): void;
  /** A key came from a key set past its refresh time because the JWKS endpoint could not be fetched. */
  jwksStaleServe?(): void;
}

export interface AuthCounterSnapshot {
  readonly cacheHits: number;
  readonly cacheMisses: number;
  readonly negativeHits: number;
  readonly asCalls: number;
  readonly asErrors: Readonly<Record<string, number>>;
}

export interface InMemoryAuthCounters extends AuthCounters {
  snapshot(): AuthCounterSnapshot;
}

export function createAuthCounters(): InMemoryAuthCounters {
  let cacheHits = 0;
  let cacheMisses = 0;
  let negativeHits = 0;
  let asCalls = 0;
  const asErrors = new Map<string, number>();
  return {
    cacheHit: () => void cacheHits++,
    cacheMiss: () => void cacheMisses++,
    negativeHit: () => void negativeHits++,
    asCall: () => void asCalls++,
    asError: (reason) => void asErrors.set(reason, (asErrors.get(reason) ?? 0) + 1),
    snapshot: () => ({ cacheHits, cacheMisses, negativeHits, asCalls, asErrors: Object.fromEntries(asErrors) }),
  };
}
