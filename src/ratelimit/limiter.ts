import { principalOf } from '../auth/principal.js';
import type { AuthContext, RateLimiter } from '../decision/index.js';
import { rateLimitKey } from '../cache/cache-keys.js';
import type { CacheStore } from '../cache/store.js';
import type { RateLimitSettings } from '../config/types.js';
import { GatewayError } from '../decision/index.js';
import { perObject } from '../lib/memo.js';

export interface RateLimiterDeps {
  readonly store: CacheStore;
  readonly keySecret: Buffer;
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

/**
 * A token bucket per principal (issuer, subject, client id) on one route, in the cache store: shared and atomic
 * across replicas on Redis. Fails open: when the store cannot answer, the request proceeds — the limiter protects
 * capacity, it is not an authorization decision, and a Redis outage must not become a gateway outage.
 */
export function createRateLimiter(route: string, settings: RateLimitSettings, deps: RateLimiterDeps): RateLimiter {
  const now = deps.now ?? Date.now;
  const bucket = { capacity: settings.requests, refillMs: settings.per };
  const bucketKey = perObject((auth: AuthContext) => rateLimitKey(deps.keySecret, route, principalOf(auth)));
  return {
    async take(auth) {
      const result = await deps.store.takeToken(bucketKey(auth), bucket, now());
      if (result && !result.allowed) {
        throw new GatewayError('rate_limited', { reason: 'rate_limit_exceeded', retryAfterMs: result.retryAfterMs });
      }
    },
  };
}
