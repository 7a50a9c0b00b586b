import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import { createRedisStore, type RedisStore } from '../../../src/cache/redis-store.js';
import type { CacheStore, TokenBucketResult } from '../../../src/cache/store.js';
import { takeFromBucket, type BucketState } from '../../../src/cache/token-bucket.js';
import { spawnRedis, startRedis, uniquePrefix, type RedisHandle } from '../../helpers/redis.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../../helpers/redis-timeouts.js';

const BUCKET = { capacity: 3, refillMs: 60_000 };

describe('takeFromBucket', () => {
  it.each<[string, BucketState | undefined, number, BucketState, TokenBucketResult]>([
    ['an absent bucket starts full', undefined, 1_000, { tokens: 2, at: 1_000 }, { allowed: true }],
    ['the last token', { tokens: 1, at: 1_000 }, 1_000, { tokens: 0, at: 1_000 }, { allowed: true }],
    ['empty: wait one refill step', { tokens: 0, at: 1_000 }, 1_000, { tokens: 0, at: 1_000 }, { allowed: false, retryAfterMs: 20_000 }],
    ['refills with elapsed time', { tokens: 0, at: 0 }, 20_000, { tokens: 0, at: 20_000 }, { allowed: true }],
    ['partial refill shortens the wait', { tokens: 0, at: 0 }, 5_000, { tokens: 0.25, at: 5_000 }, { allowed: false, retryAfterMs: 15_000 }],
    ['never beyond capacity', { tokens: 1, at: 0 }, 10_000_000, { tokens: 2, at: 10_000_000 }, { allowed: true }],
    ['a clock running backwards refills nothing', { tokens: 0, at: 50_000 }, 10_000, { tokens: 0, at: 10_000 }, { allowed: false, retryAfterMs: 20_000 }],
  ])('%s', (_title, state, now, next, result) => {
    expect(takeFromBucket(state, BUCKET, now)).toEqual({ next, result });
  });
});

describe('CacheStore.takeToken', () => {
  let redis: RedisHandle;
  let redisStore: RedisStore;
  let raw: Redis;
  const keyPrefix = uniquePrefix('token-bucket');

  beforeAll(async () => {
    redis = await startRedis();
    redisStore = createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
    raw = new Redis(redis.url);
    expect(await redisStore.whenReady(10_000)).toBe(true);
  });

  afterAll(async () => {
    raw.disconnect();
    await redisStore.close();
    await redis.stop();
  });

  const backends: [string, () => CacheStore][] = [
    ['memory', () => createMemoryStore()],
    ['redis', () => redisStore],
  ];

  it.each(backends)('%s: capacity requests pass, the next waits, time refills', async (name, backend) => {
    const store = backend();
    const key = `bucket:${name}:refill`;
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await store.takeToken(key, BUCKET, 1_000));
    expect(results).toEqual([{ allowed: true }, { allowed: true }, { allowed: true }, { allowed: false, retryAfterMs: 20_000 }]);
    expect(await store.takeToken(key, BUCKET, 21_000)).toEqual({ allowed: true });
    expect(await store.takeToken(key, BUCKET, 21_000)).toEqual({ allowed: false, retryAfterMs: 20_000 });
  });

  it('redis: the bucket lives under the prefix with a TTL of one refill period', async () => {
    await redisStore.takeToken('bucket:ttl', BUCKET, 1_000);
    const ttl = await raw.pttl(`${keyPrefix}bucket:ttl`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(BUCKET.refillMs);
  });

  it('redis: concurrent takes from two replicas never grant more than the capacity (atomic)', async () => {
    const replica = createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
    try {
      expect(await replica.whenReady(10_000)).toBe(true);
      const bucket = { capacity: 25, refillMs: 3_600_000 };
      const takes = await Promise.all(
        Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? redisStore : replica).takeToken('bucket:race', bucket, 5_000)),
      );
      expect(takes.filter((result) => result?.allowed).length).toBe(25);
    } finally {
      await replica.close();
    }
  });

  it('redis down: undefined (the caller decides to fail open), never a throw', async () => {
    const spawned = await spawnRedis();
    const store = createRedisStore({ url: spawned.url, keyPrefix: uniquePrefix('token-bucket-down') });
    try {
      expect(await store.whenReady(10_000)).toBe(true);
      await spawned.kill();
      expect(await store.takeToken('bucket:down', BUCKET, 1_000)).toBeUndefined();
    } finally {
      await store.close();
      await spawned.stop();
    }
  });
});
