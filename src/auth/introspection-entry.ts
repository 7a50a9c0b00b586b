import type { IntrospectionSettings } from '../config/types.js';
import { GatewayError } from '../decision/index.js';
import { bearerRefusal, boundKeyOf, named, type BearerRefusal } from './bearer-claims.js';
import type { IntrospectedClaims } from './introspection-client.js';
import { parseScopeClaim } from '../policy/scopes.js';
import type { AuthContext } from '../decision/index.js';

/** Why a token is refused by every route alike, so the refusal can be cached. */
export type InactiveReason = 'inactive' | 'expired' | 'refresh_token' | BearerRefusal;

/**
 * What the cache keeps about one token: facts, not a route's decision, because routes with different audiences
 * share entries and each re-checks them. Never the token. `until` (ms since the epoch) ends the entry's use
 * whatever the store's TTL does; `exp` and `nbf` are in seconds as on the wire.
 */
export type IntrospectionEntry =
  | {
      readonly active: true;
      readonly iss?: string | undefined;
      readonly sub?: string | undefined;
      readonly client_id?: string | undefined;
      readonly scope?: string | undefined;
      readonly aud?: readonly string[] | undefined;
      readonly exp?: number | undefined;
      readonly nbf?: number | undefined;
      /** `cnf.jkt`: the token is DPoP-bound (RFC 9449 §6.2). */
      readonly jkt?: string | undefined;
      readonly until: number;
    }
  | { readonly active: false; readonly reason: InactiveReason; readonly until: number };

const REFRESH_TOKEN_TYPES: ReadonlySet<string> = new Set([
  'refresh_token',
  'urn:ietf:params:oauth:token-type:refresh_token',
]);
const INACTIVE_REASONS: ReadonlySet<string> = new Set<InactiveReason>(['inactive', 'expired', 'refresh_token', 'sender_constrained', 'no_principal']);

/**
 * Turns an AS answer into an entry. A positive entry lives min(max_ttl, exp − now) (RFC 7662 §4: never beyond
 * `exp`); without `exp` (optional in RFC 7662) the AS's `active: true` holds for max_ttl, the accepted revocation
 * delay. Expired, refresh, sender-constrained and principal-less tokens become negative entries: no route may accept
 * them.
 */
export function entryFromAnswer(
  claims: IntrospectedClaims | undefined,
  settings: Pick<IntrospectionSettings, 'maxTtl' | 'negativeTtl'>,
  now: number,
): IntrospectionEntry {
  const inactive = (reason: InactiveReason): IntrospectionEntry => ({
    active: false,
    reason,
    until: now + settings.negativeTtl,
  });
  if (!claims) return inactive('inactive');
  if (claims.token_type !== undefined && REFRESH_TOKEN_TYPES.has(claims.token_type.toLowerCase())) {
    return inactive('refresh_token');
  }
  const lifetime = claims.exp === undefined ? Infinity : claims.exp * 1000 - now;
  if (lifetime <= 0) return inactive('expired');
  const { iss, scope, aud, exp, nbf } = claims;
  const client_id = named(claims.client_id);
  // Without `sub`, RFC 7662's `username` names who authorized the token; marked so it never equals a `sub`.
  const username = named(claims.username);
  const sub = named(claims.sub) ?? (username === undefined ? undefined : `username:${username}`);
  const refusal = bearerRefusal({ cnf: claims.cnf, subject: sub, clientId: client_id });
  if (refusal) return inactive(refusal);
  const jkt = boundKeyOf(claims.cnf);
  return { active: true, iss, sub, client_id, scope, aud, exp, nbf, ...(jkt && { jkt }), until: now + Math.min(settings.maxTtl, lifetime) };
}

/** An entry a route accepted. */
export type AcceptedEntry = Extract<IntrospectionEntry, { active: true }>;

export interface EntryExpectations {
  /** One of them must be a member of `aud`. */
  readonly audiences: readonly string[];
  /** Must equal `iss` when set. */
  readonly issuer: string | undefined;
  /** An entry without `aud` passes (the route opted in; RFC 7662 §2.2 makes `aud` optional). */
  readonly acceptMissingAudience: boolean;
  /** An entry without `iss` passes as from `issuer` (the route opted in; RFC 7662 §2.2 makes `iss` optional). */
  readonly acceptMissingIssuer: boolean;
  readonly now: number;
  /** Allowed skew between our clock and the AS's for `nbf`. */
  readonly clockTolerance: number;
}

/** The checks of one route; run on fresh and cached entries alike. Throws GatewayError('invalid_token'). */
export function checkEntry(entry: IntrospectionEntry, expected: EntryExpectations): asserts entry is AcceptedEntry {
  if (!entry.active) throw invalidToken(`introspection_${entry.reason}`);
  if (entry.exp !== undefined && entry.exp * 1000 <= expected.now) throw invalidToken('introspection_expired');
  // RFC 7662 §2.2 nbf, even under `active: true`; a fact of the token, so the entry stays cached and serves from nbf on.
  if (entry.nbf !== undefined && entry.nbf * 1000 > expected.now + expected.clockTolerance) {
    throw invalidToken('introspection_not_yet_valid');
  }
  if (expected.issuer !== undefined && entry.iss !== expected.issuer) {
    if (entry.iss !== undefined || !expected.acceptMissingIssuer) throw invalidToken('introspection_issuer');
  }
  if (entry.aud === undefined) {
    if (!expected.acceptMissingAudience) throw invalidToken('introspection_audience');
  } else if (!expected.audiences.some((audience) => entry.aud?.includes(audience))) {
    throw invalidToken('introspection_audience');
  }
}

/**
 * The caller an entry that passed `checkEntry` stands for; `defaultIssuer` is the principal namespace when the
 * answer has no `iss`: the pinned issuer, else the endpoint URL.
 */
export function callerOf(entry: AcceptedEntry, defaultIssuer: string): AuthContext {
  return {
    issuer: entry.iss ?? defaultIssuer,
    subject: entry.sub,
    clientId: entry.client_id,
    scopes: parseScopeClaim(entry.scope) ?? new Set(),
    audience: entry.aud ?? [],
    expiresAt: entry.exp === undefined ? entry.until : entry.exp * 1000,
    tokenKind: 'introspection',
    boundKey: entry.jkt,
  };
}

export function serializeEntry(entry: IntrospectionEntry): string {
  return JSON.stringify(entry);
}

/** A stored value that is not an entry we wrote (corrupt, foreign, older format) reads as a miss. */
export function parseEntry(raw: string): IntrospectionEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const entry = value as Record<string, unknown>;
  if (typeof entry.until !== 'number') return undefined;
  if (entry.active === false) {
    return typeof entry.reason === 'string' && INACTIVE_REASONS.has(entry.reason)
      ? { active: false, reason: entry.reason as InactiveReason, until: entry.until }
      : undefined;
  }
  if (entry.active !== true) return undefined;
  const strings = [entry.iss, entry.sub, entry.client_id, entry.scope, entry.jkt];
  if (!strings.every((claim) => claim === undefined || typeof claim === 'string')) return undefined;
  if (![entry.exp, entry.nbf].every((time) => time === undefined || typeof time === 'number')) return undefined;
  if (entry.aud !== undefined && !(Array.isArray(entry.aud) && entry.aud.every((a) => typeof a === 'string'))) {
    return undefined;
  }
  return entry as IntrospectionEntry;
}

function invalidToken(reason: string): GatewayError {
  return new GatewayError('invalid_token', { reason });
}
