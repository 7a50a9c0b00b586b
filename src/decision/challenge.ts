import type { CompiledRoute } from '../config/types.js';

export type ChallengeError = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

export interface ChallengeInput {
  readonly error?: ChallengeError;
  /** Absolute URL of the route's protected resource metadata (RFC 9728 §5.1). */
  readonly resourceMetadataUrl: string;
  readonly scopes?: readonly string[];
}

/**
 * The scopes a route's 401 challenge names: with `policy.upfront_scopes` every scope an operation can require, else
 * what any request on the route needs; when that is none, what the route offers (`scopes_supported`), in either mode.
 */
export function challengeScopes(route: CompiledRoute): readonly string[] {
  const needed = route.policy.upfrontScopes ?? route.policy.scopes;
  return needed.length > 0 ? needed : route.scopesSupported;
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
