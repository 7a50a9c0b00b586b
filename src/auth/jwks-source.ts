import { createLocalJWKSet, errors, importJWK } from 'jose';
import type { CryptoKey, FlattenedJWSInput, JSONWebKeySet, JWK, JWSHeaderParameters, LocalJWKSet } from 'jose';
import type { Logger } from 'pino';
import type { JwtAlgorithm } from '../config/types.js';
import { GatewayError } from '../decision/index.js';
import { fetchJson, isJsonObject, type JsonFetchFailure } from './fetch-json.js';

/** How long a fetched key set is used before it is refetched (jose's `cacheMaxAge` default). */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/**
 * After a failed fetch, the next one waits this long (or the cooldown, if shorter): a down endpoint gets at most
 * one fetch per second per JWKS location, and is used again within a second of coming back.
 */
export const JWKS_RETRY_BACKOFF_MS = 1_000;

/** Why a fetch brought no usable key set: a closed set, used as metric label, log field and error reason. */
export type JwksFailure =
  | `jwks_${JsonFetchFailure}`
  /** Not a public JWK Set: not an object, `keys` not an array of objects, a symmetric or private member. */
  | 'jwks_invalid'
  /** A well-formed set without a key that verifies with an allowed algorithm (empty, encryption keys, bad numbers). */
  | 'jwks_no_usable_keys'
  | 'issuer_metadata_unavailable';

export interface JwksSourceOptions {
  /** The JWKS URL: configured, or discovered (may throw `auth_unavailable`). */
  readonly locate: (signal: AbortSignal) => Promise<URL>;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly timeoutMs: number;
  /** Minimum time between refetches for an unknown `kid` after a successful fetch. */
  readonly cooldownMs: number;
  readonly staleWindowMs: number;
  /** The route's allowed algorithms: a key of an answer counts only if it verifies with one of them. */
  readonly algorithms: readonly JwtAlgorithm[];
  /**
   * The state of this JWKS location, shared with its other sources (other routes, the verifiers of a reloaded
   * config): a new source starts with the keys and the fetch policy where the others stand.
   */
  readonly location: JwksLocation;
  /** Operator lines: a failure when it starts or changes reason (never the answer's body), and the recovery. */
  readonly logger?: Logger;
  /** Metrics hooks: a fetch finished (`failure` with its reason); a key came from a set the endpoint failed to renew. */
  readonly onRefresh?: (result: 'success' | 'failure', reason?: JwksFailure) => void;
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
  /** Its algorithms stop counting for the location's answers; the location itself is closed by its pool. */
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
 * What every source of one JWKS location (issuer and jwks_uri) shares, whatever route or reloaded config it serves:
 * the last good key set and the state of the fetch policy. So a reload starts with the keys and inside the cooldown,
 * a flood of random kids costs one fetch per cooldown per location however many routes read it, and an
 * outage is reported once per location.
 */
export interface JwksLocation {
  keys: KeySet | undefined;
  /** Bumped whenever a fetch brings a different key set. */
  generation: number;
  /** When the last fetch started: the cooldown and the backoff count from it. */
  lastAttemptAt: number | undefined;
  /** Why the last fetch failed, `undefined` after a success; logged when it starts or changes. */
  lastFailure: JwksFailure | undefined;
  /** The fetch in flight, joined by every source of the location. */
  pending: Promise<void> | undefined;
  /**
   * The allowed algorithms of each open source. One key set serves them all, so a key of an answer counts when one
   * of them verifies with it (routes on one issuer usually allow the same algorithms).
   */
  readonly readers: Set<ReadonlySet<JwtAlgorithm>>;
  /** Aborts the fetch in flight once no source holds the location (closeJwksLocation). */
  readonly closing: AbortController;
}

export function createJwksLocation(): JwksLocation {
  return {
    keys: undefined,
    generation: 0,
    lastAttemptAt: undefined,
    lastFailure: undefined,
    pending: undefined,
    readers: new Set(),
    closing: new AbortController(),
  };
}

/** The last source of the location is gone: a fetch still running is of no use to anyone. */
export function closeJwksLocation(location: JwksLocation): void {
  location.closing.abort();
}

type KeySetAnswer = { readonly keys: readonly JWK[] } | { readonly failure: 'jwks_invalid' | 'jwks_no_usable_keys' };

/**
 * Remote JWKS with jose doing key selection and import (`createLocalJWKSet`: kid/alg/kty/crv/use/key_ops matching,
 * public-key check, multiple-match error) and this module owning the fetch policy, because jose's
 * `createRemoteJWKSet` reads `Date.now()` directly, throws once its cache is stale and the endpoint fails, and
 * replaces its keys with whatever the endpoint answers:
 *
 * - an answer only replaces the key set when it holds at least one public key that verifies signatures with an
 *   allowed algorithm; an empty, malformed or encryption-only answer is a failed fetch and the working set stays
 *   (`test/security/jwt.test.ts`, "a JWKS answer never makes things worse")
 * - a key set is fresh for JWKS_MAX_AGE_MS; after that a request whose `kid` it knows is served from it at once
 *   while one fetch renews it in the background (stale-while-revalidate). While the endpoint fails, its keys stay
 *   usable for `staleWindowMs` more (bounded stale-if-error), after that → `auth_unavailable`
 * - an unknown `kid` waits for one refetch, at most once per `cooldownMs` after a successful fetch (a rotation is
 *   seen within the cooldown, a flood of random kids costs one fetch per cooldown); while the endpoint is failing
 *   an unknown kid is `auth_unavailable`, not invalid (the key may be new)
 * - fetches are single-flight, time-bounded, never follow redirects; after a failure the next one waits
 *   JWKS_RETRY_BACKOFF_MS, also at a start with the endpoint down (one warning, recovery on the first request
 *   after it is back)
 * - the key set and this policy's state (last attempt, last failure, fetch in flight) live in the `location` the
 *   sources of one JWKS location share: the cooldown, the backoff and single flight hold per location, across
 *   routes and reloads, and a reload never starts from nothing
 */
export function createJwksSource(options: JwksSourceOptions): JwksSource {
  const retryBackoff = Math.min(options.cooldownMs, JWKS_RETRY_BACKOFF_MS);
  const log = options.logger;
  const { location } = options;
  const algorithms: ReadonlySet<JwtAlgorithm> = new Set(options.algorithms);
  location.readers.add(algorithms);

  const isFresh = (now: number): boolean => location.keys !== undefined && now < location.keys.fetchedAt + JWKS_MAX_AGE_MS;
  const usableKeys = (now: number): KeySet | undefined => {
    const { keys } = location;
    return keys !== undefined && now < keys.fetchedAt + JWKS_MAX_AGE_MS + options.staleWindowMs ? keys : undefined;
  };
  /** A fetch in flight is always worth joining; a new one waits `gap` after the previous attempt. */
  const mayFetch = (gap: number): boolean =>
    location.pending !== undefined || location.lastAttemptAt === undefined || options.now() - location.lastAttemptAt >= gap;
  const failureGap = (): number => (location.lastFailure === undefined ? 0 : retryBackoff);
  const allowedByReaders = (): ReadonlySet<JwtAlgorithm> => new Set([...location.readers].flatMap((allowed) => [...allowed]));
  const unavailable = (): GatewayError =>
    new GatewayError('auth_unavailable', { reason: location.lastFailure ?? 'jwks_unavailable' });

  async function fetchKeySet(): Promise<JwksFailure | undefined> {
    location.lastAttemptAt = options.now();
    const { signal } = location.closing;
    let url: URL;
    try {
      url = await options.locate(signal);
    } catch {
      return 'issuer_metadata_unavailable';
    }
    const result = await fetchJson(url, {
      fetch: options.fetch,
      timeoutMs: options.timeoutMs,
      accept: 'application/jwk-set+json, application/json',
      signal,
    });
    if (!result.ok) return `jwks_${result.failure}`;
    const answer = await verificationKeys(result.body, allowedByReaders());
    if ('failure' in answer) return answer.failure;
    const document: JSONWebKeySet = { keys: [...answer.keys] };
    const serialized = JSON.stringify(document);
    if (serialized !== location.keys?.serialized) location.generation += 1;
    location.keys = { resolve: createLocalJWKSet(document), fetchedAt: options.now(), serialized };
    return undefined;
  }

  function settle(failure: JwksFailure | undefined): void {
    const previous = location.lastFailure;
    location.lastFailure = failure;
    // No source holds the location any more, so its last fetch was cut short on purpose: nothing to report.
    if (location.closing.signal.aborted) return;
    options.onRefresh?.(failure === undefined ? 'success' : 'failure', failure);
    if (failure === undefined) {
      if (previous !== undefined) log?.info({ after: previous }, 'JWKS fetched again');
      return;
    }
    if (failure === previous) return;
    const held = usableKeys(options.now()) !== undefined;
    log?.warn(
      { reason: failure, keys_held: held },
      held
        ? 'JWKS refresh failed; the last good key set stays in use (up to jwks_stale_window), retrying'
        : 'JWKS could not be fetched; JWT requests get 503 until it can (retried on demand)',
    );
  }

  function refresh(): Promise<void> {
    location.pending ??= fetchKeySet().then(settle, () => settle('jwks_unreachable')).finally(() => {
      location.pending = undefined;
    });
    return location.pending;
  }

  async function getKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> {
    let set = usableKeys(options.now());
    if (!set) {
      if (mayFetch(failureGap())) await refresh();
      set = usableKeys(options.now());
      if (!set) throw unavailable();
    } else if (!isFresh(options.now())) {
      if (mayFetch(failureGap())) void refresh();
      if (location.lastFailure !== undefined) options.onStaleServe?.();
    }
    try {
      return await set.resolve(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      return resolveUnknownKid(header, token, error);
    }
  }

  /** The set at hand lacks the kid: maybe a rotation, so look once more, unless the set was checked just now. */
  async function resolveUnknownKid(
    header: JWSHeaderParameters,
    token: FlattenedJWSInput,
    noMatch: errors.JWKSNoMatchingKey,
  ): Promise<CryptoKey> {
    if (mayFetch(location.lastFailure === undefined ? options.cooldownMs : retryBackoff)) await refresh();
    else if (location.lastFailure === undefined) throw noMatch;
    const set = usableKeys(options.now());
    if (location.lastFailure !== undefined || !set) throw unavailable();
    return set.resolve(header, token);
  }

  return {
    getKey,
    generation: () => location.generation,
    hasKeys: () => location.keys !== undefined,
    isFresh: () => isFresh(options.now()),
    refresh,
    close: () => location.readers.delete(algorithms),
  };
}

/**
 * The keys of a JWKS answer that verify signatures with one of `algorithms` and import as public keys. A set with any
 * symmetric or private member is refused as a whole: its publisher is confused.
 */
async function verificationKeys(body: unknown, algorithms: ReadonlySet<JwtAlgorithm>): Promise<KeySetAnswer> {
  if (!isJsonObject(body) || !Array.isArray(body.keys)) return { failure: 'jwks_invalid' };
  const members: unknown[] = body.keys;
  if (!members.every((jwk): jwk is JWK => isJsonObject(jwk) && jwk.kty !== 'oct' && SECRET_MEMBERS.every((member) => !(member in jwk)))) {
    return { failure: 'jwks_invalid' };
  }
  const imports = await Promise.all(members.map((jwk) => importsForSignatures(jwk, algorithms)));
  const keys = members.filter((_jwk, index) => imports[index]);
  return keys.length > 0 ? { keys } : { failure: 'jwks_no_usable_keys' };
}

/** The key type, and curve, each algorithm verifies with (RFC 7518 §3.3-3.5, RFC 8037 §3.1). */
const KEY_TYPE: Readonly<Record<JwtAlgorithm, string>> = {
  RS256: 'RSA',
  RS384: 'RSA',
  RS512: 'RSA',
  PS256: 'RSA',
  PS384: 'RSA',
  PS512: 'RSA',
  ES256: 'EC P-256',
  ES384: 'EC P-384',
  ES512: 'EC P-521',
  EdDSA: 'OKP Ed25519',
  Ed25519: 'OKP Ed25519',
};

/**
 * The allowed algorithm `jwk` verifies signatures with, or `undefined` when it is no signing key for any of them:
 * `use` other than `sig`, `key_ops` without `verify`, an `alg` not allowed (an encryption algorithm such as
 * RSA-OAEP or ECDH-ES, or a signature algorithm the route refuses), or a key type no allowed algorithm uses.
 */
function verificationAlgorithm(jwk: JWK, algorithms: ReadonlySet<JwtAlgorithm>): JwtAlgorithm | undefined {
  if (jwk.use !== undefined && jwk.use !== 'sig') return undefined;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) return undefined;
  const keyType = jwk.crv === undefined ? String(jwk.kty) : `${String(jwk.kty)} ${String(jwk.crv)}`;
  return [...algorithms].find((alg) => KEY_TYPE[alg] === keyType && (jwk.alg === undefined || jwk.alg === alg));
}

async function importsForSignatures(jwk: JWK, algorithms: ReadonlySet<JwtAlgorithm>): Promise<boolean> {
  const alg = verificationAlgorithm(jwk, algorithms);
  if (alg === undefined) return false;
  try {
    const key = await importJWK(jwk, alg);
    return !(key instanceof Uint8Array) && key.type === 'public' && !isShortRsaKey(key);
  } catch {
    return false;
  }
}

/** jose refuses to verify with an RSA key under 2048 bits, so such a key is no key at all here. */
function isShortRsaKey(key: CryptoKey): boolean {
  const { modulusLength } = key.algorithm as { readonly modulusLength?: number };
  return modulusLength !== undefined && modulusLength < 2048;
}

/**
 * The keys of the gateway's own authorization server, held in process: nothing is fetched, so nothing goes stale
 * and no outage of its own endpoint can make its tokens unverifiable. An unknown `kid` is an invalid token.
 */
export function createLocalJwksSource(keys: { readonly keys: readonly Record<string, unknown>[] }): JwksSource {
  const resolve = createLocalJWKSet({ keys: keys.keys.map((key) => ({ ...key })) });
  return {
    getKey: (header, token) => resolve(header, token),
    generation: () => 0,
    hasKeys: () => true,
    isFresh: () => true,
    refresh: () => Promise.resolve(),
    close: () => undefined,
  };
}
