import { hash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import type { JWTPayload, ProtectedHeaderParameters } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { JwtSettings } from '../config/types.js';
import { GatewayError, isGatewayError } from '../decision/index.js';
import type { AuthCounters } from '../observability/auth-counters.js';
import { bearerRefusal, boundKeyOf, named } from './bearer-claims.js';
import { discoverJwksUri } from './issuer-metadata.js';
import { closeJwksLocation, createJwksLocation, createJwksSource, createLocalJwksSource, type JwksLocation } from './jwks-source.js';
import { perConnection } from '../lib/memo.js';
import { parseScopeClaim } from '../policy/scopes.js';
import { createSharedPool, type SharedPool } from './shared-pool.js';
import type { AuthContext, TokenVerifier } from '../decision/index.js';

export interface JwtVerifierOptions {
  /** Milliseconds since the epoch; drives claim checks, the JWKS cache and the result cache. */
  readonly now?: () => number;
  readonly fetch?: typeof fetch;
  /** JWKS refresh and stale-serve counts go here. */
  readonly counters?: Pick<AuthCounters, 'jwksRefresh' | 'jwksStaleServe'>;
  /** JWKS outages and recoveries are logged here (one line per change, never a key set's body). */
  readonly logger?: Logger;
  /** Shared with the verifiers of other routes and of reloaded configs. Default: this verifier's own. */
  readonly caches?: JwtVerifierCaches;
}

/** Verified tokens kept per verifier; the hit path is a map lookup (and a hash once per connection) instead of a signature check. */
const RESULT_CACHE_SIZE = 10_000;

/** Three unpadded base64url segments (RFC 7515 §7.1); rejects padding, `%`, 2 or 4 dots and JWE before decoding. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

interface CachedResult {
  readonly context: AuthContext;
  readonly generation: number;
}

type ResultCache = LRUCache<string, CachedResult>;

/**
 * What JWT verifiers share while any of them holds it, so a verifier built by a reload starts where the one it
 * replaces stands: the key set and fetch state of a JWKS location (issuer and jwks_uri), shared by
 * every route on it too, and the verified-token cache of identical settings. A new issuer or JWKS URL starts
 * empty: it fails closed until its keys load.
 */
export interface JwtVerifierCaches {
  readonly jwksLocations: SharedPool<JwksLocation>;
  readonly results: SharedPool<ResultCache>;
}

export function createJwtVerifierCaches(): JwtVerifierCaches {
  return { jwksLocations: createSharedPool(closeJwksLocation), results: createSharedPool() };
}

/**
 * JWT access token verifier for one route (RFC 9068 profile): jose `jwtVerify` with an alg allow-list, pinned
 * issuer, audience (any one of the configured ones), required exp/iss/aud, clock tolerance and optional
 * `typ: at+jwt`; keys from the issuer's JWKS (jwks-source.ts) and nothing in the token (`jku`, `x5u`, `jwk`
 * headers are never read). Checks jose leaves out: maximum lifetime, `iat` not in the future, single audience in
 * strict mode, no nested JWT.
 */
export function createJwtVerifier(settings: JwtSettings, options: JwtVerifierOptions = {}): TokenVerifier {
  const now = options.now ?? Date.now;
  const fetchImpl = options.fetch ?? fetch;
  const toleranceSeconds = settings.clockTolerance / 1000;
  const caches = options.caches ?? createJwtVerifierCaches();
  const location = caches.jwksLocations.acquire(`${settings.issuer} ${settings.jwksUri?.href ?? '(discovered)'}`, createJwksLocation);
  // Any setting may change what a token verifies to, so only identical settings share verified tokens.
  const results = caches.results.acquire(JSON.stringify(settings), () => new LRUCache<string, CachedResult>({ max: RESULT_CACHE_SIZE }));
  const cacheKeyOf = perConnection(resultCacheKey);
  let discovered: URL | undefined;

  const keys = settings.localKeys ? createLocalJwksSource(settings.localKeys) : createJwksSource({
    locate: async (signal) =>
      settings.jwksUri ??
      (discovered ??= await discoverJwksUri(settings.issuer, { fetch: fetchImpl, timeoutMs: settings.fetchTimeout, signal })),
    fetch: fetchImpl,
    now,
    timeoutMs: settings.fetchTimeout,
    cooldownMs: settings.jwksCooldown,
    staleWindowMs: settings.jwksStaleWindow,
    algorithms: settings.algorithms,
    location: location.value,
    logger: options.logger?.child({ component: 'jwks', issuer: settings.issuer }),
    onRefresh: (result, reason) => options.counters?.jwksRefresh?.(result, reason),
    onStaleServe: () => options.counters?.jwksStaleServe?.(),
  });

  async function verifyUncached(token: string): Promise<AuthContext> {
    precheck(token, settings.issuer);
    const currentDate = new Date(now());
    const { payload } = await jwtVerify(token, keys.getKey, {
      algorithms: [...settings.algorithms],
      issuer: settings.issuer,
      // jose: the token's `aud` must hold at least one of these.
      audience: [...settings.audiences],
      requiredClaims: ['exp', 'iss', 'aud'],
      clockTolerance: toleranceSeconds,
      currentDate,
      ...(settings.requireTyp ? { typ: 'at+jwt' } : {}),
    });
    return toAuthContext(payload, settings, Math.floor(currentDate.getTime() / 1000));
  }

  async function verifyAndKeep(token: string, key: string): Promise<AuthContext> {
    const generation = keys.generation();
    try {
      const context = await verifyUncached(token);
      results.value.set(key, { context, generation });
      return context;
    } catch (error) {
      results.value.delete(key);
      throw toGatewayError(error);
    }
  }

  return {
    // A token verified before, under the same keys, that has not expired: its context at once.
    verify(token, request) {
      const key = cacheKeyOf(token, request?.connection);
      const hit = results.value.get(key);
      if (
        hit &&
        hit.generation === keys.generation() &&
        keys.isFresh() &&
        now() < hit.context.expiresAt + settings.clockTolerance
      ) {
        return hit.context;
      }
      return verifyAndKeep(token, key);
    },
    isReady: () => keys.hasKeys(),
    async warm() {
      if (!keys.hasKeys()) await keys.refresh();
    },
    close() {
      keys.close();
      location.release();
      results.release();
      return Promise.resolve();
    },
  };
}

/** Key of a verified token in the result cache: its SHA-256, so the cache never holds a token. One-shot, no Hash object. */
export function resultCacheKey(token: string): string {
  return hash('sha256', token, 'base64url');
}

/**
 * Cheap checks on the unverified token before any key lookup, so garbage and foreign-issuer tokens are rejected
 * as invalid without a JWKS fetch and even while the JWKS endpoint is down. Rejection only: nothing here accepts.
 */
function precheck(token: string, issuer: string): void {
  if (!COMPACT_JWS.test(token)) throw invalid('ERR_JWS_INVALID');
  let header: ProtectedHeaderParameters;
  let claims: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    claims = decodeJwt(token);
  } catch {
    throw invalid('ERR_JWT_INVALID');
  }
  if (claims.iss !== issuer) throw invalid('issuer_mismatch');
  // A JWE-only header or a nested-JWT content type means the payload is not this token's claims (RFC 8725 §3.3).
  if ('enc' in header) throw invalid('jwe_header');
  if (typeof header.cty === 'string' && /^(application\/)?jwt$/i.test(header.cty)) throw invalid('nested_jwt');
}

function toAuthContext(payload: JWTPayload, settings: JwtSettings, nowSeconds: number): AuthContext {
  // jose guarantees exp is a number and in the future, aud is present and matches, iat/nbf are numbers if present.
  const exp = payload.exp as number;
  const toleranceSeconds = settings.clockTolerance / 1000;
  if (payload.iat !== undefined && payload.iat > nowSeconds + toleranceSeconds) throw invalid('iat_in_future');
  if (exp - (payload.iat ?? nowSeconds) > settings.maxLifetime / 1000) throw invalid('lifetime_exceeded');

  const aud: unknown = payload.aud;
  const audience = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a) => typeof a === 'string') : [];
  if (settings.strictAudience && (audience.length !== 1 || !settings.audiences.includes(audience[0] ?? ''))) {
    throw invalid('audience_not_exclusive');
  }
  const subject = named(optionalString(payload, 'sub'));
  const clientId = named(optionalString(payload, 'client_id')) ?? named(optionalString(payload, 'azp'));
  const refusal = bearerRefusal({ cnf: payload.cnf, subject, clientId });
  if (refusal) throw invalid(refusal);
  return {
    issuer: settings.issuer,
    subject,
    clientId,
    scopes: parseScopeClaim(payload.scope ?? payload.scp) ?? new Set<string>(),
    audience,
    expiresAt: exp * 1000,
    tokenKind: 'jwt',
    boundKey: boundKeyOf(payload.cnf),
  };
}

/** Identity claims feed session binding: a present non-string value is a malformed token, not "absent". */
function optionalString(payload: JWTPayload, claim: string): string | undefined {
  const value = payload[claim];
  if (value === undefined || typeof value === 'string') return value;
  throw invalid('claim_type');
}

function invalid(reason: string): GatewayError {
  return new GatewayError('invalid_token', { reason });
}

/** jose codes are log-safe; jose errors themselves are dropped because claim errors carry the payload. */
function toGatewayError(error: unknown): GatewayError {
  if (isGatewayError(error)) return error;
  if (error instanceof errors.JWKSInvalid) return new GatewayError('auth_unavailable', { reason: error.code });
  if (error instanceof errors.JOSEError) return invalid(error.code);
  return invalid('ERR_UNEXPECTED');
}
