import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import { createRedisStore, type RedisStore } from '../../../src/cache/redis-store.js';
import type { CacheStore } from '../../../src/cache/store.js';
import { spawnCluster, startRedis, uniquePrefix, type RedisHandle, type SpawnedCluster } from '../../helpers/redis.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../../helpers/redis-timeouts.js';

let redis: RedisHandle;
let redisStore: RedisStore;
let replica: RedisStore;
const keyPrefix = uniquePrefix('lock-and-scan');

beforeAll(async () => {
  redis = await startRedis();
  redisStore = createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
  replica = createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
  expect(await redisStore.whenReady(10_000)).toBe(true);
  expect(await replica.whenReady(10_000)).toBe(true);
});

afterAll(async () => {
  await Promise.all([redisStore.close(), replica.close()]);
  await redis.stop();
});

const backends: [string, () => CacheStore][] = [
  ['memory', () => createMemoryStore()],
  ['redis', () => redisStore],
];

describe('CacheStore.setIfAbsent', () => {
  it.each(backends)('%s: only the first caller takes the key; it is free again once deleted', async (name, backend) => {
    const store = backend();
    const key = `lock:${name}`;
    expect(await store.setIfAbsent(key, 'a', 10_000)).toBe(true);
    expect(await store.setIfAbsent(key, 'b', 10_000)).toBe(false);
    expect(await store.get(key)).toBe('a');
    await store.delete(key);
    expect(await store.setIfAbsent(key, 'c', 10_000)).toBe(true);
  });

  it('memory: the key is free again after its TTL', async () => {
    let now = 1_000_000;
    const store = createMemoryStore({ now: () => now });
    expect(await store.setIfAbsent('lock', 'a', 1_000)).toBe(true);
    now += 1_000;
    expect(await store.setIfAbsent('lock', 'b', 1_000)).toBe(false);
    now += 1;
    expect(await store.setIfAbsent('lock', 'b', 1_000)).toBe(true);
  });

  it('redis: two replicas racing for one key: exactly one wins (atomic SET NX)', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) => (index % 2 === 0 ? redisStore : replica).setIfAbsent('lock:race', String(index), 10_000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});

describe('CacheStore.deleteIfEquals', () => {
  it.each(backends)('%s: deletes the key only while it holds the given value', async (name, backend) => {
    const store = backend();
    const key = `owned:${name}`;
    expect(await store.setIfAbsent(key, 'owner-a', 10_000)).toBe(true);
    expect(await store.deleteIfEquals(key, 'owner-b')).toBe(false);
    expect(await store.get(key)).toBe('owner-a');
    expect(await store.deleteIfEquals(key, 'owner-a')).toBe(true);
    expect(await store.get(key)).toBeUndefined();
    expect(await store.deleteIfEquals(key, 'owner-a')).toBe(false);
  });

  it('redis: a value replaced by another replica is not deleted by the first owner', async () => {
    expect(await redisStore.set('owned:replaced', 'owner-a', 10_000)).toBe(true);
    expect(await replica.set('owned:replaced', 'owner-b', 10_000)).toBe(true);
    expect(await redisStore.deleteIfEquals('owned:replaced', 'owner-a')).toBe(false);
    expect(await replica.get('owned:replaced')).toBe('owner-b');
  });
});

describe('CacheStore.scan', () => {
  it.each(backends)('%s: every key with the prefix (without the store prefix), none other, at most the limit', async (name, backend) => {
    const store = backend();
    const prefix = `scan-${name}:a*[b]:`;
    for (const key of ['1', '2', '3']) await store.set(prefix + key, 'v', 10_000);
    await store.set(`scan-${name}:other`, 'v', 10_000);
    expect((await store.scan(prefix, 100))?.sort()).toEqual([`${prefix}1`, `${prefix}2`, `${prefix}3`]);
    expect(await store.scan(prefix, 2)).toHaveLength(2);
  });

  it('redis cluster: keys on every primary are found', { timeout: 60_000 }, async () => {
    let cluster: SpawnedCluster | undefined;
    let store: RedisStore | undefined;
    try {
      cluster = await spawnCluster(3);
      store = createRedisStore({ cluster: { nodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })) }, keyPrefix: 'p:', commandTimeoutMs: 1_000 });
      expect(await store.whenReady(10_000)).toBe(true);
      const keys = Array.from({ length: 20 }, (_, index) => `grant:${index}`);
      for (const key of keys) expect(await store.set(key, 'v', 10_000)).toBe(true);
      expect((await store.scan('grant:', 100))?.sort()).toEqual([...keys].sort());
    } finally {
      await store?.close();
      await cluster?.stop();
    }
  });
});
