import { createHmac, hash, randomBytes } from 'node:crypto';
import type { CacheSettings } from '../config/types.js';

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

/**
 * The HMAC key for cache keys. Replicas sharing Redis must share it, so it is required with Redis; the in-process
 * cache gets a random one per process (its entries die with the process anyway).
 */
export function resolveCacheKeySecret(settings: CacheSettings): Buffer {
  if (settings.keySecret) return Buffer.from(settings.keySecret.reveal(), 'utf8');
  if (settings.redis ?? settings.redisUrl) throw new Error('cache.key_secret is required when a Redis cache is configured');
  return randomBytes(32);
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

/** A consent link or a consent page's browser flow, by the random value the browser holds (never stored). */
export function consentKey(keySecret: Buffer, kind: 'link' | 'flow', value: string): string {
  return `consent-${kind}:${keyedDigest(keySecret, [`consent-${kind}`, value])}`;
}
