import { createMemoryStore } from '../../src/cache/memory-store.js';
import type { CacheStore } from '../../src/cache/store.js';
import { routeChallenge } from '../../src/decision/challenge.js';
import { createDpopChecker } from '../../src/auth/dpop-checker.js';
import type { RequestFacts } from '../../src/decision/facts.js';
import type { AuthContext, DecisionRuntime, RouteRuntime, TokenVerifier, UpstreamCredentialProvider } from '../../src/decision/ports.js';
import { GatewayError } from '../../src/decision/refusal.js';
import { createDecisionState, keepCallerToken, type DecisionState, type Door } from '../../src/decision/state.js';
import { createPrincipalSlots } from '../../src/ratelimit/principal-slots.js';
import { createRateLimiter } from '../../src/ratelimit/limiter.js';
import { createSessionBindings } from '../../src/session/bindings.js';
import { compileOrThrow } from './gateway.js';

/**
 * One decision step at a time: a runtime built from YAML routes, with the real session bindings, rate limiter and
 * principal slots on an in-process store, a verifier that knows a few tokens by name, and a static credential.
 */

export const ISSUER = 'https://as.example.test';
export const PUBLIC = 'http://127.0.0.1:8080';

/** A caller as a verifier hands it out. */
export function caller(subject = 'alice', scopes: readonly string[] = ['mcp'], clientId = 'ide'): AuthContext {
  return { issuer: ISSUER, subject, clientId, scopes: new Set(scopes), audience: [`${PUBLIC}/calc/mcp`], expiresAt: Date.now() + 300_000, tokenKind: 'jwt' };
}

/** Accepts the tokens it was given (`token` → caller); any other token is invalid, `down` cannot be decided. */
export function namedTokens(tokens: Readonly<Record<string, AuthContext>>): TokenVerifier {
  return {
    verify(token) {
      if (token === 'down') return Promise.reject(new GatewayError('auth_unavailable'));
      const auth = tokens[token];
      return auth ? auth : Promise.reject(new GatewayError('invalid_token'));
    },
    isReady: () => true,
    warm: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

const STATIC_CREDENTIAL: UpstreamCredentialProvider = { headersFor: () => ({ authorization: 'Bearer upstream-secret' }) };

export interface StepRuntimeOptions {
  readonly verifier?: TokenVerifier;
  readonly credentials?: UpstreamCredentialProvider;
  readonly store?: CacheStore;
}

/** `routes` are YAML list items (`- name: …`); every route gets the same ports. */
export function stepRuntime(routes: string, options: StepRuntimeOptions = {}, topLevel = ''): DecisionRuntime {
  const config = compileOrThrow(`
public_url: ${PUBLIC}
${topLevel}
routes:
${routes}
`);
  const store = options.store ?? createMemoryStore();
  const keySecret = Buffer.alloc(32, 7);
  const entries = new Map<string, RouteRuntime>();
  for (const route of config.routes) {
    entries.set(route.path, {
      route,
      verifier: options.verifier ?? namedTokens({ good: caller() }),
      credentials: options.credentials ?? STATIC_CREDENTIAL,
      identity: undefined,
      sessions: createSessionBindings(route.name, route.sessions, { store, keySecret }),
      rateLimiter: route.rateLimit && createRateLimiter(route.name, route.rateLimit, { store, keySecret }),
      challenge: routeChallenge(route),
      dpop: route.dpop.mode === 'bearer_only' ? undefined : createDpopChecker(route, { store, keySecret }),
    });
  }
  return { config, routes: entries, slots: { streams: createPrincipalSlots(), requestsInFlight: createPrincipalSlots() } };
}

/** A YAML route item on /<name>/mcp accepting the test issuer's tokens; `extra` lines are indented four spaces. */
export function route(name: string, extra = ''): string {
  return [
    `  - name: ${name}`,
    `    path: /${name}/mcp`,
    `    upstream: { url: "http://127.0.0.1:3000/mcp" }`,
    `    authorization_servers: [${ISSUER}]`,
    `    tokens: { jwt: { issuer: ${ISSUER}, jwks_uri: ${ISSUER}/jwks, algorithms: [ES256] } }`,
    extra,
  ].join('\n');
}

/** Request facts as a door builds them; header names lowercased, raw lines kept. */
export function facts(method: string, url: string, headers: Record<string, string> = {}): RequestFacts {
  const lowered: Record<string, string> = { host: '127.0.0.1:8080' };
  for (const [name, value] of Object.entries(headers)) lowered[name.toLowerCase()] = value;
  return { method, url, headers: lowered, rawHeaders: Object.entries(headers).flat(), host: lowered.host, clientAddress: '127.0.0.1' };
}

/**
 * A state as the steps before the one under test leave it: the route matched, and, with `auth`, the caller
 * accepted (its token kept for the steps that need it).
 */
export function stateAt(runtime: DecisionRuntime, request: RequestFacts, options: { readonly auth?: AuthContext; readonly door?: Door; readonly body?: string } = {}): DecisionState {
  const state = createDecisionState(runtime, request, options.door ?? 'proxy');
  state.entry = runtime.routes.get(request.url.split('?', 1)[0] ?? '');
  if (options.auth) {
    state.auth = options.auth;
    state.scopes = options.auth.scopes;
    keepCallerToken(state, 'caller-token');
  }
  if (options.body !== undefined) state.body = Buffer.from(options.body);
  return state;
}

/** The refusal a step threw or rejected with, as `code:reason`; `passed` when it did not refuse. */
export async function verdict(step: () => unknown): Promise<string> {
  try {
    await step();
    return 'passed';
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return error.reason ? `${error.code}:${error.reason}` : error.code;
  }
}
