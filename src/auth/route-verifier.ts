import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { Logger } from 'pino';
import type { CacheStore } from '../cache/store.js';
import type { CompiledRoute } from '../config/types.js';
import type { AuthCounters } from '../observability/auth-counters.js';
import { createIntrospectionVerifier } from './introspection-verifier.js';
import { createJwtVerifier } from './jwt-verifier.js';
import type { TokenVerifier } from './types.js';

export interface RouteVerifierDeps {
  readonly store: CacheStore;
  readonly keySecret: Buffer;
  readonly now?: () => number;
  readonly fetch?: typeof fetch;
  readonly counters?: AuthCounters;
  readonly logger?: Logger;
}

/**
 * The verifier of one route. With both `jwt` and `introspection` configured, a token that decodes as a JWS whose
 * `iss` is the configured JWT issuer is verified locally; everything else is introspected. Either path still
 * verifies fully, so the dispatch itself decides nothing.
 */
export function createRouteVerifier(route: CompiledRoute, deps: RouteVerifierDeps): TokenVerifier {
  const { jwt, introspection } = route.tokens;
  const jwtVerifier = jwt && createJwtVerifier(jwt, { now: deps.now, fetch: deps.fetch, counters: deps.counters });
  const introspectionVerifier =
    introspection &&
    createIntrospectionVerifier(introspection, { ...deps, audience: jwt?.audience ?? route.resource });
  if (!jwt || !jwtVerifier || !introspectionVerifier) {
    const single = jwtVerifier ?? introspectionVerifier;
    if (!single) throw new Error(`route ${route.name} has neither tokens.jwt nor tokens.introspection`);
    return single;
  }
  const parts = [jwtVerifier, introspectionVerifier];
  return {
    verify: (token) => (isJwtFrom(token, jwt.issuer) ? jwtVerifier : introspectionVerifier).verify(token),
    isReady: () => parts.every((part) => part.isReady()),
    async warm() {
      await Promise.all(parts.map((part) => part.warm()));
    },
    async close() {
      await Promise.all(parts.map((part) => part.close()));
    },
  };
}

/** A JWS (`alg` in its header) whose unverified payload names `issuer`; decoding only routes, it proves nothing. */
export function isJwtFrom(token: string, issuer: string): boolean {
  try {
    return typeof decodeProtectedHeader(token).alg === 'string' && decodeJwt(token).iss === issuer;
  } catch {
    return false;
  }
}
