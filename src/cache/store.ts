/**
 * A small key/value store with TTLs shared by the introspection cache (and later session bindings, upstream
 * tokens, rate limits). Implementations NEVER throw and never hang: a failed or slow backend answers like a miss
 * (`undefined` / `false`) within its command timeout, because the cache is an optimisation, not a dependency.
 * Keys are opaque strings built by callers from HMACs; values are small JSON strings, never tokens.
 */
export interface CacheStore {
  /** The value, or `undefined` for a miss: nothing stored, or no answer (the cache is an optimisation). */
  get(key: string): Promise<string | undefined>;
  /**
   * What this very read found: a value, nothing, or no answer. For callers that must not take a failed read for an
   * absent key (session bindings, grants): the store's overall `status()` may already say "ready" again because
   * another command succeeded meanwhile (a Cluster with one node down).
   */
  lookup(key: string): Promise<Lookup<string>>;
  /** Stores `value` for `ttlMs` (> 0). Resolves false when the backend did not take it. */
  set(key: string, value: string, ttlMs: number, options?: SetOptions): Promise<boolean>;
  delete(key: string): Promise<boolean>;
  /** Stores `value` only when `key` holds nothing (atomically across replicas on Redis): a lock. False otherwise. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /**
   * Deletes `key` only while it holds `value` (atomically across replicas on Redis): a lock's owner releases it
   * without removing a lock someone else took once the owner's had expired. False otherwise.
   */
  deleteIfEquals(key: string, value: string): Promise<boolean>;
  /**
   * Restarts the TTL of `key` (to `ttlMs`) only while it holds `value` (atomically across replicas on Redis): a
   * record is kept alive without writing back a value someone may have replaced meanwhile. False otherwise.
   */
  touchIfEquals(key: string, value: string, ttlMs: number): Promise<boolean>;
  /**
   * Every key starting with `prefix` (at most `limit`), for operator listings, never for requests. `undefined` when
   * the backend could not answer.
   */
  scan(prefix: string, limit: number): Promise<string[] | undefined>;
  /**
   * Takes one token from the token bucket at `key` (atomically across replicas on Redis). `undefined` when the
   * backend could not answer: callers decide whether that fails open.
   */
  takeToken(key: string, bucket: TokenBucket, nowMs: number): Promise<TokenBucketResult | undefined>;
  /** For /readyz and metrics; never fails readiness. */
  status(): CacheStatus;
  close(): Promise<void>;
}

/** What the store holds under a key: a value, nothing, or no answer (the store is down: callers fail closed). */
export type Lookup<T> = { readonly kind: 'found'; readonly value: T } | { readonly kind: 'absent' } | { readonly kind: 'unavailable' };

/** What a value is, for a store that bounds records per kind (the in-process one); Redis ignores it. */
export interface SetOptions {
  /**
   * A negative answer (an inactive token): any caller can make these, so they are bounded apart from the positive
   * answers valid callers rely on.
   */
  readonly negative?: boolean;
}

export type CacheStatus =
  | { readonly backend: 'memory'; readonly state: 'ready' }
  | {
      readonly backend: 'redis';
      readonly state: 'ready' | 'connecting' | 'unavailable';
      /** Connected at least once since the gateway started: /readyz waits for this, not for every reconnect. */
      readonly connectedOnce: boolean;
    };

/** `capacity` tokens, refilled evenly over `refillMs`: at most `capacity` requests per `refillMs` on average. */
export interface TokenBucket {
  readonly capacity: number;
  readonly refillMs: number;
}

export type TokenBucketResult =
  | { readonly allowed: true }
  /** `retryAfterMs`: until one token is available again. */
  | { readonly allowed: false; readonly retryAfterMs: number };
