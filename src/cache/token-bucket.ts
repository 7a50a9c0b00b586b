import type { TokenBucket, TokenBucketResult } from './store.js';

/** A bucket's state: tokens left (fractional) at a time in ms. Both stores keep exactly this. */
export interface BucketState {
  readonly tokens: number;
  readonly at: number;
}

/**
 * One take from a token bucket, as a pure step. An absent bucket is full; a clock that went backwards (replicas
 * with skewed clocks) refills nothing. The Redis store runs the same arithmetic in Lua (redis-store.ts).
 */
export function takeFromBucket(
  state: BucketState | undefined,
  bucket: TokenBucket,
  now: number,
): { readonly next: BucketState; readonly result: TokenBucketResult } {
  const rate = bucket.capacity / bucket.refillMs;
  const elapsed = state === undefined ? 0 : Math.max(0, now - state.at);
  const tokens = Math.min(bucket.capacity, (state?.tokens ?? bucket.capacity) + elapsed * rate);
  if (tokens >= 1) return { next: { tokens: tokens - 1, at: now }, result: { allowed: true } };
  return { next: { tokens, at: now }, result: { allowed: false, retryAfterMs: Math.ceil((1 - tokens) / rate) } };
}
