import type { Logger } from 'pino';
import { createDpopChecker } from '../auth/dpop-checker.js';
import { createGatewayAuthorizationServer, type GatewayAuthorizationServer } from '../authserver/gateway-authorization-server.js';
import { routeChallenge } from '../decision/index.js';
import type { DecisionRuntime, RouteRuntime, TokenVerifier, UpstreamCredentialProvider } from '../decision/index.js';
import type { DoorRuntime } from '../doors/shared/runtime.js';
import type { CacheStore } from '../cache/store.js';
import type { CompiledConfig, CompiledRoute } from '../config/types.js';
import { createConsentRuntime, type ConsentRuntime } from '../grants/service.js';
import { createIdentityAsserter } from '../identity/assertion.js';
import { auditPrincipal } from '../observability/audit.js';
import type { SigningKey, SigningKeySource } from '../identity/signing-key.js';
import { createUpstreamCredentialProvider } from '../credentials/upstream-credentials.js';
import { createRateLimiter } from '../ratelimit/limiter.js';
import { createSessionBindings, type SeenSessions } from '../session/bindings.js';

export interface Runtime extends DoorRuntime {
  /** Key of identity assertions, published at /.well-known/jwks.json; absent when nothing asserts identity. */
  readonly signingKey: SigningKey | undefined;
  /** Grants and consent pages of user_oauth routes; absent when no route uses user_oauth. */
  readonly consent: ConsentRuntime | undefined;
  /** The gateway as authorization server (`authorization_server`); absent unless configured. */
  readonly authorizationServer: GatewayAuthorizationServer | undefined;
}

export type VerifierFactory = (route: CompiledRoute) => TokenVerifier;

/** Process-wide services every route's runtime draws on; the same object for every config (reloads). */
export interface RuntimeServices {
  /** Shared cache: upstream tokens, session bindings, rate-limit buckets. */
  readonly store: CacheStore;
  /** HMAC key of cache keys (shared by replicas with Redis). */
  readonly keySecret: Buffer;
  /** Streams and requests in flight per caller on this process: counted across reloads. */
  readonly slots: DecisionRuntime['slots'];
  readonly signingKeys: SigningKeySource;
  /** With Redis: the session bindings this replica has seen (served through a Redis outage). */
  readonly seenSessions?: SeenSessions;
  /** Audit lines of user grants (user_oauth). */
  readonly logger?: Logger;
  readonly fetch?: typeof fetch;
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

export function createRuntime(config: CompiledConfig, verifierFor: VerifierFactory, services: RuntimeServices): Runtime {
  const asserts = config.routes.some((route) => route.upstream.identity !== undefined);
  const signingKey = asserts || config.signingKey ? services.signingKeys(config.signingKey) : undefined;
  const issuer = config.publicUrl.href.replace(/\/$/, '');
  const consent = createConsentRuntime(config, services);
  const routes = new Map<string, RouteRuntime>();
  for (const route of config.routes) {
    const { identity } = route.upstream;
    routes.set(route.path, {
      route,
      verifier: verifierFor(route),
      credentials: upstreamCredentials(route, consent, services),
      identity: identity && signingKey && createIdentityAsserter(identity, { issuer, key: signingKey, now: services.now }),
      sessions: createSessionBindings(route.name, route.sessions, services),
      rateLimiter: route.rateLimit && createRateLimiter(route.name, route.rateLimit, services),
      challenge: routeChallenge(route),
      dpop: route.dpop.mode === 'bearer_only' ? undefined : createDpopChecker(route, services),
    });
  }
  const authorizationServer = createGatewayAuthorizationServer(config, services);
  return {
    config,
    routes,
    slots: services.slots,
    signingKey,
    consent,
    authorizationServer,
    auditPrincipal: auditPrincipal(config.auditSubject, services.keySecret),
  };
}

export async function closeRuntime(runtime: Runtime): Promise<void> {
  await Promise.all([...runtime.routes.values()].map((entry) => entry.verifier.close()));
}

/** A route's credential towards its upstream: each user's own grant (user_oauth), else the gateway's own. */
function upstreamCredentials(route: CompiledRoute, consent: ConsentRuntime | undefined, services: RuntimeServices): UpstreamCredentialProvider {
  const { auth } = route.upstream;
  if (auth.type !== 'user_oauth') return createUpstreamCredentialProvider(auth, services);
  const grants = consent?.routes.get(route.name)?.grants;
  if (!grants) throw new Error('user_oauth needs the consent section');
  return grants;
}
