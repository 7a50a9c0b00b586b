import { acceptedSchemes } from '../config/sections/routes/dpop.js';
import type { CompiledRoute } from '../config/types.js';

export type ChallengeError = 'invalid_request' | 'invalid_token' | 'insufficient_scope' | DpopChallengeError;

/** RFC 9449 §7.1 / §9: errors about the proof, which only the `DPoP` challenge carries. */
export type DpopChallengeError = 'invalid_dpop_proof' | 'use_dpop_nonce';

/** The schemes a route takes (`routes[].dpop.mode`): one challenge each (RFC 9449 §7.2). */
export interface ChallengeSchemes {
  readonly bearer: boolean;
  /** The `algs` of the `DPoP` challenge; absent when the route does not take DPoP. */
  readonly dpopAlgorithms: readonly string[] | undefined;
}

/** A route that takes bearer tokens only: one `Bearer` challenge. */
export const BEARER_ONLY: ChallengeSchemes = Object.freeze({ bearer: true, dpopAlgorithms: undefined });

/** The challenges a route's refusals carry, from `routes[].dpop`. */
export function challengeSchemes(route: Pick<CompiledRoute, 'dpop'>): ChallengeSchemes {
  const { bearer, dpop } = acceptedSchemes(route.dpop.mode);
  return dpop ? { bearer, dpopAlgorithms: route.dpop.algorithms } : BEARER_ONLY;
}

export interface ChallengeInput {
  readonly error?: ChallengeError;
  /** Absolute URL of the route's protected resource metadata (RFC 9728 §5.1). */
  readonly resourceMetadataUrl: string;
  readonly scopes?: readonly string[];
  /** Default: Bearer only. */
  readonly schemes?: ChallengeSchemes;
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
  /** The schemes the route takes, a challenge each (`challengeSchemes`); default Bearer only. */
  readonly schemes?: ChallengeSchemes | undefined;
}

export function routeChallenge(route: CompiledRoute): ChallengeContext {
  return {
    metadataUrl: route.metadataUrl,
    challengeScopes: challengeScopes(route),
    alsoNamedScopes: route.policy.challengeScopes,
    advertisedScopes: advertisedScopes(route),
    schemes: challengeSchemes(route),
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
  invalid_dpop_proof: 'The DPoP proof is invalid',
  use_dpop_nonce: 'The DPoP proof must carry the nonce given in the DPoP-Nonce header',
} as const satisfies Record<ChallengeError, string>;

/** RFC 6750 §3: quoted values use %x20-21 / %x23-5B / %x5D-7E only (no `"`, no `\`, no CTL, ASCII). */
const QUOTABLE = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/;

/** RFC 6749 §3.3 scope-token: like QUOTABLE but without SP, and not empty. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

const DPOP_ERRORS: ReadonlySet<ChallengeError> = new Set<DpopChallengeError>(['invalid_dpop_proof', 'use_dpop_nonce']);

/**
 * Builds a `WWW-Authenticate` value: `Bearer error="…", error_description="…", resource_metadata="…", scope="…"`,
 * and on a route that takes DPoP the `DPoP` challenge with the same parameters and `algs` (RFC 9449 §7.1), after
 * the Bearer one when both schemes are taken (§7.2). A proof's error (`invalid_dpop_proof`, `use_dpop_nonce`) goes
 * in the DPoP challenge only. `error` and its description only when given; `scope` only when non-empty. Every
 * auth-param appears once per challenge. Throws on a value that cannot be quoted safely: config validation rejects
 * those, so it is a programming error.
 */
export function buildChallenge(input: ChallengeInput): string {
  const scopes = input.scopes ?? [];
  if (scopes.some((scope) => !SCOPE_TOKEN.test(scope))) {
    throw new Error('challenge scope is not an RFC 6749 scope-token');
  }
  const { bearer, dpopAlgorithms } = input.schemes ?? BEARER_ONLY;
  const challenges: string[] = [];
  if (bearer) {
    const error = input.error !== undefined && !DPOP_ERRORS.has(input.error) ? input.error : undefined;
    challenges.push(challenge('Bearer', error, input.resourceMetadataUrl, scopes, []));
  }
  if (dpopAlgorithms !== undefined) {
    challenges.push(challenge('DPoP', input.error, input.resourceMetadataUrl, scopes, [['algs', dpopAlgorithms.join(' ')]]));
  }
  return challenges.join(', ');
}

function challenge(
  scheme: string,
  error: ChallengeError | undefined,
  resourceMetadataUrl: string,
  scopes: readonly string[],
  extra: readonly (readonly [string, string])[],
): string {
  const params: (readonly [string, string])[] = [];
  if (error !== undefined) params.push(['error', error], ['error_description', CHALLENGE_DESCRIPTIONS[error]]);
  params.push(['resource_metadata', resourceMetadataUrl]);
  if (scopes.length > 0) params.push(['scope', scopes.join(' ')]);
  params.push(...extra);
  for (const [name, value] of params) {
    if (!QUOTABLE.test(value)) throw new Error(`challenge parameter ${name} cannot be quoted`);
  }
  return `${scheme} ${params.map(([name, value]) => `${name}="${value}"`).join(', ')}`;
}
