import { createLocalJWKSet, errors, importJWK } from 'jose';
import type { CryptoKey, FlattenedJWSInput, JSONWebKeySet, JWK, JWSHeaderParameters, LocalJWKSet } from 'jose';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import { fetchJson, isJsonObject, type JsonFetchFailure } from './fetch-json.js';

/** How long a fetched key set is used before it is refetched (jose's `cacheMaxAge` default). */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/**
 * After a failed fetch, the next one waits this long (or the cooldown, if shorter): a down endpoint gets at most
 * one fetch per second from a verifier, and is used again within a second of coming back.
 */
export const JWKS_RETRY_BACKOFF_MS = 1_000;

/** Why a fetch brought no usable key set: a closed set, used as metric label, log field and error reason. */
export type JwksFailure =
  | `jwks_${JsonFetchFailure}`
  /** Not a public JWK Set: not an object, `keys` not an array of objects, a symmetric or private member. */
  | 'jwks_invalid'
  /** A well-formed set without one key that imports for signature verification (empty, `use: enc`, bad numbers). */
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
  /**
   * Where the last good key set of this JWKS location is kept: shared with the other sources of the location (other
   * routes, the verifiers of a reloaded config), so a new source starts with the keys (K8). Default: its own.
   */
  readonly keySet?: KeySetSlot;
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
  close(): void;
}

/** Members that only private or symmetric JWKs carry (RFC 7518 §6, RFC 8037, draft AKP `priv`). */
const SECRET_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const;

interface KeySet {
  readonly resolve: LocalJWKSet;
  readonly fetchedAt: number;
  readonly serialized: string;
}

/** The last good key set of one JWKS location, its generation, and the outage last reported for it. */
export interface KeySetSlot {
  keys: KeySet | undefined;
  generation: number;
  reported: JwksFailure | undefined;
}

export function createKeySetSlot(): KeySetSlot {
  return { keys: undefined, generation: 0, reported: undefined };
}

type KeySetAnswer = { readonly keys: readonly JWK[] } | { readonly failure: 'jwks_invalid' | 'jwks_no_usable_keys' };

/**
 * Remote JWKS with jose doing key selection and import (`createLocalJWKSet`: kid/alg/kty/crv/use/key_ops matching,
 * public-key check, multiple-match error) and this module owning the fetch policy, because jose's
 * `createRemoteJWKSet` reads `Date.now()` directly, throws once its cache is stale and the endpoint fails, and
 * replaces its keys with whatever the endpoint answers:
 *
 * - an answer only replaces the key set when it holds at least one public key that imports for signatures; an
 *   empty, malformed or key-less answer is a failed fetch and the working set stays (checklist K9)
 * - a key set is fresh for JWKS_MAX_AGE_MS; after that a request whose `kid` it knows is served from it at once
 *   while one fetch renews it in the background (stale-while-revalidate). While the endpoint fails, its keys stay
 *   usable for `staleWindowMs` more (bounded stale-if-error), after that → `auth_unavailable`
 * - an unknown `kid` waits for one refetch, at most once per `cooldownMs` after a successful fetch (a rotation is
 *   seen within the cooldown, a flood of random kids costs one fetch per cooldown); while the endpoint is failing
 *   an unknown kid is `auth_unavailable`, not invalid (the key may be new)
 * - fetches are single-flight, time-bounded, never follow redirects; after a failure the next one waits
 *   JWKS_RETRY_BACKOFF_MS, also at a start with the endpoint down (one warning, recovery on the first request
 *   after it is back)
 * - the key set lives in a slot the sources of one JWKS location share (`keySet`): a reload never starts from
 *   nothing, and an outage is reported once per location, however many routes and reloads read it
 */
export function createJwksSource(options: JwksSourceOptions): JwksSource {
  const closing = new AbortController();
  const retryBackoff = Math.min(options.cooldownMs, JWKS_RETRY_BACKOFF_MS);
  const log = options.logger;
  const slot = options.keySet ?? createKeySetSlot();
  let lastAttemptAt: number | undefined;
  let lastFailure: JwksFailure | undefined;
  let pending: Promise<void> | undefined;

  const isFresh = (now: number): boolean => slot.keys !== undefined && now < slot.keys.fetchedAt + JWKS_MAX_AGE_MS;
  const usableKeys = (now: number): KeySet | undefined => {
    const { keys } = slot;
    return keys !== undefined && now < keys.fetchedAt + JWKS_MAX_AGE_MS + options.staleWindowMs ? keys : undefined;
  };
  /** A fetch in flight is always worth joining; a new one waits `gap` after the previous attempt. */
  const mayFetch = (gap: number): boolean =>
    pending !== undefined || lastAttemptAt === undefined || options.now() - lastAttemptAt >= gap;
  const failureGap = (): number => (lastFailure === undefined ? 0 : retryBackoff);
  const unavailable = (): GatewayError => new GatewayError('auth_unavailable', { reason: lastFailure ?? 'jwks_unavailable' });

  async function fetchKeySet(): Promise<JwksFailure | undefined> {
    lastAttemptAt = options.now();
    let url: URL;
    try {
      url = await options.locate(closing.signal);
    } catch {
      return 'issuer_metadata_unavailable';
    }
    const result = await fetchJson(url, {
      fetch: options.fetch,
      timeoutMs: options.timeoutMs,
      accept: 'application/jwk-set+json, application/json',
      signal: closing.signal,
    });
    if (!result.ok) return `jwks_${result.failure}`;
    const answer = await verificationKeys(result.body);
    if ('failure' in answer) return answer.failure;
    const document: JSONWebKeySet = { keys: [...answer.keys] };
    const serialized = JSON.stringify(document);
    if (serialized !== slot.keys?.serialized) slot.generation += 1;
    slot.keys = { resolve: createLocalJWKSet(document), fetchedAt: options.now(), serialized };
    return undefined;
  }

  function settle(failure: JwksFailure | undefined): void {
    lastFailure = failure;
    // A closed source's last fetch was cut short on purpose: nothing to report.
    if (closing.signal.aborted) return;
    options.onRefresh?.(failure === undefined ? 'success' : 'failure', failure);
    const reported = slot.reported;
    slot.reported = failure;
    if (failure === undefined) {
      if (reported !== undefined) log?.info({ after: reported }, 'JWKS fetched again');
      return;
    }
    if (failure === reported) return;
    const held = usableKeys(options.now()) !== undefined;
    log?.warn(
      { reason: failure, keys_held: held },
      held
        ? 'JWKS refresh failed; the last good key set stays in use (up to jwks_stale_window), retrying'
        : 'JWKS could not be fetched; JWT requests get 503 until it can (retried on demand)',
    );
  }

  function refresh(): Promise<void> {
    pending ??= fetchKeySet().then(settle, () => settle('jwks_unreachable')).finally(() => {
      pending = undefined;
    });
    return pending;
  }

  async function getKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> {
    let set = usableKeys(options.now());
    if (!set) {
      if (mayFetch(failureGap())) await refresh();
      set = usableKeys(options.now());
      if (!set) throw unavailable();
    } else if (!isFresh(options.now())) {
      if (mayFetch(failureGap())) void refresh();
      if (lastFailure !== undefined) options.onStaleServe?.();
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
    if (mayFetch(lastFailure === undefined ? options.cooldownMs : retryBackoff)) await refresh();
    else if (lastFailure === undefined) throw noMatch;
    const set = usableKeys(options.now());
    if (lastFailure !== undefined || !set) throw unavailable();
    return set.resolve(header, token);
  }

  return {
    getKey,
    generation: () => slot.generation,
    hasKeys: () => slot.keys !== undefined,
    isFresh: () => isFresh(options.now()),
    refresh,
    close: () => closing.abort(),
  };
}

/**
 * The keys of a JWKS answer that can verify signatures: `use` absent or `sig`, importing as a public key for their
 * algorithm. A set with any symmetric or private member is refused as a whole (B15): its publisher is confused.
 */
async function verificationKeys(body: unknown): Promise<KeySetAnswer> {
  if (!isJsonObject(body) || !Array.isArray(body.keys)) return { failure: 'jwks_invalid' };
  const members: unknown[] = body.keys;
  if (!members.every((jwk): jwk is JWK => isJsonObject(jwk) && jwk.kty !== 'oct' && SECRET_MEMBERS.every((member) => !(member in jwk)))) {
    return { failure: 'jwks_invalid' };
  }
  const imports = await Promise.all(members.map((jwk) => importsForSignatures(jwk)));
  const keys = members.filter((_jwk, index) => imports[index]);
  return keys.length > 0 ? { keys } : { failure: 'jwks_no_usable_keys' };
}

/** Algorithm to import a key without `alg` for: any algorithm of its family checks the same key material. */
const FAMILY_ALGORITHM: Readonly<Record<string, string>> = {
  RSA: 'RS256',
  'EC P-256': 'ES256',
  'EC P-384': 'ES384',
  'EC P-521': 'ES512',
  'OKP Ed25519': 'Ed25519',
};

function importAlgorithm(jwk: JWK): string | undefined {
  if (typeof jwk.alg === 'string') return jwk.alg;
  return FAMILY_ALGORITHM[jwk.crv === undefined ? String(jwk.kty) : `${String(jwk.kty)} ${jwk.crv}`];
}

async function importsForSignatures(jwk: JWK): Promise<boolean> {
  if (jwk.use !== undefined && jwk.use !== 'sig') return false;
  const alg = importAlgorithm(jwk);
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
