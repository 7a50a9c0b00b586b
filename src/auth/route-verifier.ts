import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { Logger } from 'pino';
import type { CacheStore } from '../cache/store.js';
import type { CompiledRoute } from '../config/types.js';
import type { AuthCounters } from '../observability/auth-counters.js';
import { createIntrospectionVerifier } from './introspection-verifier.js';
import { createJwtVerifier, type JwtVerifierCaches } from './jwt-verifier.js';
import type { AuthContext, TokenVerifier } from '../decision/index.js';

export interface RouteVerifierDeps {
  readonly store: CacheStore;
  readonly keySecret: Buffer;
  readonly now?: () => number;
  readonly fetch?: typeof fetch;
  readonly counters?: AuthCounters;
  readonly logger?: Logger;
  /** One per process, so verifiers of a reloaded config inherit JWKS keys and verified tokens. */
  readonly jwtCaches?: JwtVerifierCaches;
}

export type TokenKind = AuthContext['tokenKind'];

/** Decorates one inner verifier (e.g. times it); called once per inner verifier, with the kind of tokens it decides. */
export type InnerVerifierWrapper = (kind: TokenKind, verifier: TokenVerifier) => TokenVerifier;

/** A route's verifier whose inner verifiers can be decorated, so a decorator never repeats the dispatch per token. */
export interface RouteVerifier extends TokenVerifier {
  /** The same dispatch over `wrap(kind, inner)` of each inner verifier; the inner verifiers are shared, not copied. */
  wrapInner(wrap: InnerVerifierWrapper): RouteVerifier;
}

/** The verifiers of a route's configured token kinds; at least one is present. */
export interface InnerVerifiers {
  readonly jwt?: TokenVerifier;
  readonly introspection?: TokenVerifier;
}

/**
 * The verifier of one route. With both `jwt` and `introspection` configured, a token that decodes as a JWS whose
 * `iss` is the configured JWT issuer is verified locally; everything else is introspected. Either path still
 * verifies fully, so the dispatch itself decides nothing.
 */
export function createRouteVerifier(route: CompiledRoute, deps: RouteVerifierDeps): RouteVerifier {
  const { jwt, introspection } = route.tokens;
  const inner: InnerVerifiers = {
    jwt:
      jwt &&
      createJwtVerifier(jwt, { now: deps.now, fetch: deps.fetch, counters: deps.counters, logger: deps.logger, caches: deps.jwtCaches }),
    introspection:
      introspection && createIntrospectionVerifier(introspection, { ...deps, audiences: jwt?.audiences ?? [route.resource] }),
  };
  return dispatchingVerifier(inner, jwt?.issuer);
}

/** Dispatches each token to one of `inner` (see createRouteVerifier); `jwtIssuer` is the configured JWT issuer. */
export function dispatchingVerifier(inner: InnerVerifiers, jwtIssuer: string | undefined): RouteVerifier {
  const choose = chooser(inner, jwtIssuer);
  const parts = [inner.jwt, inner.introspection].filter((part) => part !== undefined);
  return {
    verify: (token, request) => choose(token).verify(token, request),
    isReady: () => parts.every((part) => part.isReady()),
    async warm() {
      await Promise.all(parts.map((part) => part.warm()));
    },
    async close() {
      await Promise.all(parts.map((part) => part.close()));
    },
    wrapInner: (wrap) =>
      dispatchingVerifier(
        {
          jwt: inner.jwt && wrap('jwt', inner.jwt),
          introspection: inner.introspection && wrap('introspection', inner.introspection),
        },
        jwtIssuer,
      ),
  };
}

function chooser({ jwt, introspection }: InnerVerifiers, jwtIssuer: string | undefined): (token: string) => TokenVerifier {
  if (jwt && introspection && jwtIssuer !== undefined) {
    return (token) => (isJwtFrom(token, jwtIssuer) ? jwt : introspection);
  }
  const single = jwt ?? introspection;
  // The config schema requires one of tokens.jwt and tokens.introspection.
  if (!single) throw new Error('a route verifier needs a jwt or an introspection verifier');
  return () => single;
}

/** A JWS (`alg` in its header) whose unverified payload names `issuer`; decoding only routes, it proves nothing. */
export function isJwtFrom(token: string, issuer: string): boolean {
  try {
    return typeof decodeProtectedHeader(token).alg === 'string' && decodeJwt(token).iss === issuer;
  } catch {
    return false;
  }
}
