import { createLocalJWKSet, errors } from 'jose';
import type { CryptoKey, FlattenedJWSInput, JSONWebKeySet, JWSHeaderParameters, LocalJWKSet } from 'jose';
import { GatewayError } from '../errors.js';
import { fetchJson, isJsonObject } from './fetch-json.js';

/** How long a fetched key set is used before it is refetched (jose's `cacheMaxAge` default). */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/** After a failed fetch, the next attempt waits this long (or the cooldown, if shorter): no hammering. */
export const JWKS_RETRY_BACKOFF_MS = 5_000;

export interface JwksSourceOptions {
  /** The JWKS URL: configured, or discovered (may throw `auth_unavailable`). */
  readonly locate: (signal: AbortSignal) => Promise<URL>;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly timeoutMs: number;
  readonly cooldownMs: number;
  readonly staleWindowMs: number;
  /** Metrics hooks: a fetch finished; a key came from a set past its refresh time. */
  readonly onRefresh?: (result: 'success' | 'failure') => void;
  readonly onStaleServe?: () => void;
}

export interface JwksSource {
  /** jose key resolver; rejects with `auth_unavailable` when no usable key set exists. */
  readonly getKey: (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;
  /** Changes whenever a fetch brings a different key set: results verified under an older one are re-verified. */
  generation(): number;
  hasKeys(): boolean;
  isFresh(): boolean;
  /** One fetch (joined if one is in flight). Never throws. */
  refresh(): Promise<void>;
  close(): void;
}

/** Members that only private or symmetric JWKs carry (RFC 7518 §6, RFC 8037, draft AKP `priv`). */
const SECRET_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const;

interface KeySet {
  readonly resolve: LocalJWKSet;
  readonly fetchedAt: number;
  readonly serialized: string;
}

/**
 * Remote JWKS with jose doing key selection and import (`createLocalJWKSet`: kid/alg/kty/crv/use/key_ops matching,
 * public-key check, multiple-match error) and this module owning the fetch policy, because jose's
 * `createRemoteJWKSet` reads `Date.now()` directly and throws once its cache is stale and the endpoint fails:
 *
 * - a key set is fresh for JWKS_MAX_AGE_MS, then refetched; while the endpoint fails, its keys stay usable for
 *   `staleWindowMs` more (bounded stale-if-error), after that → `auth_unavailable`
 * - an unknown `kid` triggers one refetch, at most once per `cooldownMs`; while the endpoint is failing an
 *   unknown kid is `auth_unavailable`, not invalid (the key may be new)
 * - fetches are single-flight, time-bounded, never follow redirects; a key set with symmetric or private members
 *   counts as a failed fetch
 */
export function createJwksSource(options: JwksSourceOptions): JwksSource {
  const closing = new AbortController();
  const retryBackoff = Math.min(options.cooldownMs, JWKS_RETRY_BACKOFF_MS);
  let keys: KeySet | undefined;
  let generation = 0;
  let lastAttemptAt: number | undefined;
  let lastFailure: string | undefined;
  let pending: Promise<void> | undefined;

  const isFresh = (now: number): boolean => keys !== undefined && now < keys.fetchedAt + JWKS_MAX_AGE_MS;
  const isUsable = (now: number): boolean =>
    keys !== undefined && now < keys.fetchedAt + JWKS_MAX_AGE_MS + options.staleWindowMs;
  // A fetch already in flight is always worth joining; a new one waits `gap` after the previous attempt.
  const mayFetch = (now: number, gap: number): boolean =>
    pending !== undefined || lastAttemptAt === undefined || now - lastAttemptAt >= gap;
  const unavailable = (): GatewayError =>
    new GatewayError('auth_unavailable', { reason: lastFailure ?? 'jwks_unavailable' });

  async function fetchKeySet(): Promise<void> {
    lastAttemptAt = options.now();
    try {
      const url = await options.locate(closing.signal);
      const result = await fetchJson(url, {
        fetch: options.fetch,
        timeoutMs: options.timeoutMs,
        accept: 'application/jwk-set+json, application/json',
        signal: closing.signal,
      });
      if (!result.ok) {
        lastFailure = `jwks_${result.failure}`;
        return;
      }
      const resolve = toKeyResolver(result.body);
      if (!resolve) {
        lastFailure = 'jwks_invalid';
        return;
      }
      const serialized = JSON.stringify(result.body);
      if (serialized !== keys?.serialized) generation += 1;
      keys = { resolve, fetchedAt: options.now(), serialized };
      lastFailure = undefined;
    } catch (error) {
      lastFailure = error instanceof GatewayError && error.reason ? error.reason : 'jwks_unavailable';
    }
  }

  function refresh(): Promise<void> {
    pending ??= fetchKeySet().finally(() => {
      pending = undefined;
      options.onRefresh?.(lastFailure === undefined ? 'success' : 'failure');
    });
    return pending;
  }

  async function getKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> {
    const now = options.now();
    if (!isFresh(now) && mayFetch(now, lastFailure === undefined ? 0 : retryBackoff)) await refresh();
    if (!keys || !isUsable(options.now())) throw unavailable();
    if (!isFresh(options.now())) options.onStaleServe?.();
    try {
      return await keys.resolve(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      if (mayFetch(options.now(), lastFailure === undefined ? options.cooldownMs : retryBackoff)) await refresh();
      else if (lastFailure === undefined) throw error;
      if (lastFailure !== undefined || !keys) throw unavailable();
      return keys.resolve(header, token);
    }
  }

  return {
    getKey,
    generation: () => generation,
    hasKeys: () => keys !== undefined,
    isFresh: () => isFresh(options.now()),
    refresh,
    close: () => closing.abort(),
  };
}

/** jose's local key set over a validated document; undefined when the document is not a public JWKS (B15). */
function toKeyResolver(body: unknown): LocalJWKSet | undefined {
  if (!isJsonObject(body) || !Array.isArray(body.keys)) return undefined;
  const publicOnly = body.keys.every(
    (jwk: unknown) => isJsonObject(jwk) && jwk.kty !== 'oct' && SECRET_MEMBERS.every((member) => !(member in jwk)),
  );
  if (!publicOnly) return undefined;
  try {
    return createLocalJWKSet(body as unknown as JSONWebKeySet);
  } catch {
    return undefined;
  }
}
