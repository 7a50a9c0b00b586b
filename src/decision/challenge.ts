import type { CompiledRoute } from '../config/types.js';

export type ChallengeError = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

export interface ChallengeInput {
  readonly error?: ChallengeError;
  /** Absolute URL of the route's protected resource metadata (RFC 9728 §5.1). */
  readonly resourceMetadataUrl: string;
  readonly scopes?: readonly string[];
}

/** What a route's challenges say, built once per compiled route (`routeChallenge`) and read by the response table. */
export interface ChallengeContext {
  /** Absolute URL of the route's protected resource metadata (RFC 9728 §5.1), the `resource_metadata` parameter. */
  readonly metadataUrl: string;
  /** The `scope` of a 401 challenge (`challengeScopes`). */
  readonly challengeScopes: readonly string[];
  /** `policy.challenge_scopes`: named in every challenge, a 403 too, never required. */
  readonly alsoNamedScopes: readonly string[];
  /** `scopes_supported` as the route's metadata publishes it (`advertisedScopes`). */
  readonly advertisedScopes: readonly string[];
}

export function routeChallenge(route: CompiledRoute): ChallengeContext {
  return {
    metadataUrl: route.metadataUrl,
    challengeScopes: challengeScopes(route),
    alsoNamedScopes: route.policy.challengeScopes,
    advertisedScopes: advertisedScopes(route),
  };
}

/**
 * The scopes a route's 401 challenge names: with `policy.upfront_scopes` every scope an operation can require, else
 * what any request on the route needs; when that is none, what the route offers (`scopes_supported`), in either
 * mode; then `policy.challenge_scopes` (`namedScopes`).
 */
export function challengeScopes(route: CompiledRoute): readonly string[] {
  const needed = route.policy.upfrontScopes ?? route.policy.scopes;
  return namedScopes(needed.length > 0 ? needed : route.scopesSupported, route.policy.challengeScopes, advertisedScopes(route));
}

/**
 * `scopes_supported` as the route's metadata publishes it: the configured list, widened with what a challenge can
 * name beyond it (`policy.upfront_scopes`, `policy.challenge_scopes`), so it never names less than the first
 * challenge and a client that reads only the metadata asks for the scopes the authorization server insists on.
 */
export function advertisedScopes(route: CompiledRoute): readonly string[] {
  const extra = [...(route.policy.upfrontScopes ?? []), ...route.policy.challengeScopes];
  if (extra.every((scope) => route.scopesSupported.includes(scope))) return route.scopesSupported;
  return [...new Set([...route.scopesSupported, ...extra])];
}

/**
 * The `scope` of a challenge: `needed`, then `alsoNamed`. Scope order carries no meaning (RFC 6749 §3.3), but a
 * known client replaces the scope it requests with its own default whenever that equals `scopes_supported` joined
 * by spaces, dropping what the challenge asked for; a step-up union often equals it. So when the two would be the
 * same string, the challenge names its scopes in another order (the first last). A single scope cannot differ, and
 * needs not: that client's default is then the same scope (test/unit/decision/challenge-scopes.test.ts).
 */
export function namedScopes(
  needed: readonly string[],
  alsoNamed: readonly string[],
  advertised: readonly string[],
): readonly string[] {
  const scopes = alsoNamed.every((scope) => needed.includes(scope)) ? needed : [...new Set([...needed, ...alsoNamed])];
  const [first, ...rest] = scopes;
  if (first === undefined || rest.length === 0 || scopes.join(' ') !== advertised.join(' ')) return scopes;
  return [...rest, first];
}

/** Fixed per error: a challenge never echoes anything the client sent. */
export const CHALLENGE_DESCRIPTIONS = {
  invalid_request: 'Malformed authorization request',
  invalid_token: 'The access token is invalid or expired',
  insufficient_scope: 'The access token lacks a required scope',
} as const satisfies Record<ChallengeError, string>;

/** RFC 6750 §3: quoted values use %x20-21 / %x23-5B / %x5D-7E only (no `"`, no `\`, no CTL, ASCII). */
const QUOTABLE = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/;

/** RFC 6749 §3.3 scope-token: like QUOTABLE but without SP, and not empty. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Builds a `WWW-Authenticate` value: `Bearer error="…", error_description="…", resource_metadata="…", scope="…"`.
 * `error` and its description only when given; `scope` only when non-empty. Every auth-param appears once.
 * Throws on a value that cannot be quoted safely: config validation rejects those, so it is a programming error.
 */
export function buildChallenge(input: ChallengeInput): string {
  const params: [string, string][] = [];
  if (input.error !== undefined) {
    params.push(['error', input.error], ['error_description', CHALLENGE_DESCRIPTIONS[input.error]]);
  }
  params.push(['resource_metadata', input.resourceMetadataUrl]);
  const scopes = input.scopes ?? [];
  if (scopes.some((scope) => !SCOPE_TOKEN.test(scope))) {
    throw new Error('challenge scope is not an RFC 6749 scope-token');
  }
  if (scopes.length > 0) params.push(['scope', scopes.join(' ')]);

  for (const [name, value] of params) {
    if (!QUOTABLE.test(value)) throw new Error(`challenge parameter ${name} cannot be quoted`);
  }
  return `Bearer ${params.map(([name, value]) => `${name}="${value}"`).join(', ')}`;
}
