import { createHmac, hash } from 'node:crypto';
import type { RecordKind } from './record-kinds.js';

/**
 * Key of a cached introspection answer: a keyed hash of the token (never the token, never a fragment of it),
 * namespaced by the issuer or endpoint so two authorization servers never share entries. The store adds the
 * configured key prefix.
 */
export function introspectionCacheKey(namespace: string, keySecret: Buffer, token: string): string {
  return introspectionCacheKeys(namespace, keySecret)(token);
}

/** The key function of one verifier: the namespace part is hashed once, only the token per request. */
export function introspectionCacheKeys(namespace: string, keySecret: Buffer): (token: string) => string {
  const prefix = `introspect:${hash('sha256', namespace, 'hex').slice(0, 16)}:`;
  return (token) => prefix + createHmac('sha256', keySecret).update(token).digest('base64url');
}

/** A keyed hash of identifying parts (a principal, a session id): equal parts give equal digests, nothing reversible. */
export function keyedDigest(keySecret: Buffer, parts: readonly string[]): string {
  return createHmac('sha256', keySecret).update(JSON.stringify(parts)).digest('base64url');
}

/**
 * A principal's short keyed digest, for log lines (grant audit, `grants list`, request audit with
 * `log.audit_subject: hashed`): it correlates lines without naming anybody, and a log reader without the key
 * cannot test guessed subjects against it. Equal on every replica sharing `cache.key_secret`.
 */
export function principalDigest(keySecret: Buffer, issuer: string, subject: string): string {
  return keyedDigest(keySecret, ['principal', issuer, subject]).slice(0, 22);
}

/** Session binding of one route's session id; the id itself never becomes a key. */
export function sessionBindingKey(keySecret: Buffer, route: string, sessionId: string): string {
  return `session:${keyedDigest(keySecret, [route, sessionId])}`;
}

/** Rate-limit bucket of one principal on one route. */
export function rateLimitKey(keySecret: Buffer, route: string, principal: readonly string[]): string {
  return `ratelimit:${keyedDigest(keySecret, [route, ...principal])}`;
}

/** A cached upstream token: `parts` name the token endpoint, client, request and (token exchange) the caller. */
export function upstreamTokenKey(keySecret: Buffer, parts: readonly string[]): string {
  return `upstream-token:${keyedDigest(keySecret, parts)}`;
}

/** Prefix of every user grant (user_oauth) of one route, so an operator listing can scan one route. */
export function userGrantPrefix(keySecret: Buffer, route: string): string {
  return `grant:${keyedDigest(keySecret, ['grant-route', route]).slice(0, 22)}:`;
}

/** One principal's grant on one route: neither the route name nor the identity is readable in the key. */
export function userGrantKey(keySecret: Buffer, route: string, issuer: string, subject: string): string {
  return userGrantPrefix(keySecret, route) + keyedDigest(keySecret, ['grant', route, issuer, subject]);
}

/**
 * One principal's revocation epoch on one route: a grant opens only while it names the current epoch, and a
 * revocation replaces the epoch, so a grant value written back into the store after a revocation stays dead.
 */
export function grantEpochKey(keySecret: Buffer, route: string, issuer: string, subject: string): string {
  return `grant-epoch:${keyedDigest(keySecret, ['grant-epoch', route, issuer, subject])}`;
}

/** A consent link or a consent page's browser flow, by the random value the browser holds (never stored). */
export function consentKey(keySecret: Buffer, kind: 'link' | 'flow', value: string): string {
  return `consent-${kind}:${keyedDigest(keySecret, [`consent-${kind}`, value])}`;
}

/** The live consent link of one principal on one route, so a caller asking again gets that link back. */
export function currentConsentLinkKey(keySecret: Buffer, route: string, issuer: string, subject: string): string {
  return `consent-link-of:${keyedDigest(keySecret, ['consent-link-of', route, issuer, subject])}`;
}

/**
 * A DPoP proof seen (RFC 9449 §11.1): its jti with the key that signed it, so a replay is refused on every replica
 * sharing the store while the proof's iat is still in the window.
 */
export function dpopProofKey(keySecret: Buffer, boundKey: string, jti: string): string {
  return `dpop-jti:${keyedDigest(keySecret, ['dpop-jti', boundKey, jti])}`;
}

/** Which bound of the in-process store a key counts against, by the class before its first `:`. */
const KIND_OF_KEY_CLASS: ReadonlyMap<string, RecordKind> = new Map([
  ['introspect', 'introspection'],
  ['session', 'sessions'],
  ['ratelimit', 'rate_limits'],
  ['upstream-token', 'upstream_tokens'],
  ['grant', 'grants'],
  ['grant-refresh', 'grants'],
  ['grant-epoch', 'grants'],
  ['consent-link', 'consent_links'],
  ['consent-link-of', 'consent_links'],
  ['consent-flow', 'consent_flows'],
  ['dpop-jti', 'dpop_proofs'],
]);

/** The record kind of a key built above (or of a prefix of one); `undefined` for any other key. */
export function recordKindOf(key: string): RecordKind | undefined {
  const end = key.indexOf(':');
  return end < 0 ? undefined : KIND_OF_KEY_CLASS.get(key.slice(0, end));
}
