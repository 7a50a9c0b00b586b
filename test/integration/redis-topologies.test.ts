import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCacheStore } from '../../src/gateway/cache-store.js';
import { createRedisStore, type RedisStore, type RedisStoreOptions } from '../../src/cache/redis-store.js';
import type { CacheStore } from '../../src/cache/store.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { freePort } from '../helpers/net.js';
import {
  spawnCluster,
  spawnRedis,
  spawnSentinel,
  uniquePrefix,
  type SpawnedCluster,
  type SpawnedRedis,
  type SpawnedSentinel,
} from '../helpers/redis.js';
import { compiled, configWith, parseObject } from '../unit/config/fixtures.js';

const DATA_PASSWORD = 'data-pw-canary-5c1e';
const SENTINEL_PASSWORD = 'sentinel-pw-canary-83ad';
const CLUSTER_PASSWORD = 'cluster-pw-canary-e07b';
const KEY_SECRET = 'k'.repeat(32);
const VALUE = 'value-canary-2f9a';
const READY_WAIT_MS = 10_000;
const BUCKET = { capacity: 2, refillMs: 60_000 };

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function owned<T extends CacheStore>(store: T): T {
  cleanups.push(() => store.close());
  return store;
}

/** A store built the way the gateway builds it: YAML `cache` section → compiled settings → createCacheStore. */
function storeFromConfig(cache: Record<string, unknown>, env: Record<string, string>): CacheStore {
  const config = compiled(parseObject(configWith({ cache }), { env }));
  return owned(createCacheStore(config.cache));
}

function directStore(options: RedisStoreOptions): RedisStore {
  return owned(createRedisStore(options));
}

/** set, get, takeToken and delete through `store`; `raw(key)` reads what Redis holds under the prefixed key. */
async function exerciseStore(store: CacheStore, keyPrefix: string, raw: (key: string) => Promise<string | null>): Promise<void> {
  await expect.poll(() => store.set('entry', VALUE, 60_000), { interval: 20, timeout: READY_WAIT_MS }).toBe(true);
  expect(await store.get('entry')).toBe(VALUE);
  expect(await raw(`${keyPrefix}entry`)).toBe(VALUE);

  expect(await store.takeToken('bucket', BUCKET, 1_000)).toEqual({ allowed: true });
  expect(await store.takeToken('bucket', BUCKET, 1_000)).toEqual({ allowed: true });
  const denied = await store.takeToken('bucket', BUCKET, 1_000);
  expect(denied).toMatchObject({ allowed: false });
  expect(denied?.allowed === false && denied.retryAfterMs).toBeGreaterThan(0);

  expect(await store.delete('entry')).toBe(true);
  expect(await store.get('entry')).toBeUndefined();
  expect(store.status()).toEqual({ backend: 'redis', state: 'ready', connectedOnce: true });
}

describe('Redis Sentinel (real primary + sentinel)', () => {
  let primary: SpawnedRedis;
  let sentinel: SpawnedSentinel;
  let raw: Redis;

  beforeAll(async () => {
    primary = await spawnRedis(['--requirepass', DATA_PASSWORD]);
    sentinel = await spawnSentinel(primary, { masterPassword: DATA_PASSWORD, sentinelPassword: SENTINEL_PASSWORD });
    raw = new Redis({ host: '127.0.0.1', port: primary.port, password: DATA_PASSWORD });
  });

  afterAll(async () => {
    raw.disconnect();
    await sentinel.stop();
    await primary.stop();
  });

  it('redis_sentinel from the config file: set, get, takeToken and delete reach the primary the sentinel names', async () => {
    const keyPrefix = uniquePrefix('sentinel');
    const store = storeFromConfig(
      {
        redis_sentinel: {
          name: sentinel.name,
          // The first sentinel is down: the next one is asked.
          sentinels: [`127.0.0.1:${await freePort()}`, `127.0.0.1:${sentinel.port}`],
          password: '${env:REDIS_PASSWORD}',
          sentinel_password: '${env:SENTINEL_PASSWORD}',
        },
        key_secret: KEY_SECRET,
        key_prefix: keyPrefix,
      },
      { REDIS_PASSWORD: DATA_PASSWORD, SENTINEL_PASSWORD },
    );
    await exerciseStore(store, keyPrefix, (key) => raw.get(key));
  });

  it('D9 a wrong sentinel password → misses and status unavailable, never a throw; no password in the logs', async () => {
    const logs = captureLogs();
    const store = directStore({
      sentinel: {
        name: sentinel.name,
        sentinels: [{ host: '127.0.0.1', port: sentinel.port }],
        password: DATA_PASSWORD,
        sentinelPassword: 'wrong-pw-canary-19c4',
      },
      keyPrefix: uniquePrefix('sentinel'),
      logger: logs.logger,
    });
    expect(await store.whenReady(200)).toBe(false);
    expect(await store.get('entry')).toBeUndefined();
    expect(await store.set('entry', VALUE, 60_000)).toBe(false);
    expect(await store.takeToken('bucket', BUCKET, 1_000)).toBeUndefined();
    await expect.poll(() => store.status().state, { interval: 20, timeout: READY_WAIT_MS }).toBe('unavailable');
    for (const secret of ['wrong-pw-canary-19c4', DATA_PASSWORD, VALUE]) expect(logs.text()).not.toContain(secret);
  });

  it('I12 primary killed → misses; restarted → the store asks the sentinel again and stores by itself', async () => {
    const own = await spawnRedis();
    cleanups.push(() => own.stop());
    const ownSentinel = await spawnSentinel(own, { name: 'restarting' });
    cleanups.push(() => ownSentinel.stop());
    const store = directStore({
      sentinel: { name: 'restarting', sentinels: [{ host: '127.0.0.1', port: ownSentinel.port }] },
      keyPrefix: uniquePrefix('sentinel'),
    });
    expect(await store.whenReady(READY_WAIT_MS)).toBe(true);

    await own.kill();
    expect(await store.get('entry')).toBeUndefined();
    expect(await store.set('entry', VALUE, 60_000)).toBe(false);

    await own.restart();
    expect(await store.whenReady(READY_WAIT_MS)).toBe(true);
    await expect.poll(() => store.set('entry', VALUE, 60_000), { interval: 20, timeout: READY_WAIT_MS }).toBe(true);
    expect(await store.get('entry')).toBe(VALUE);
  });
});

describe('Redis Cluster (three real masters)', () => {
  let cluster: SpawnedCluster;
  let raw: Cluster;

  beforeAll(async () => {
    cluster = await spawnCluster(3, CLUSTER_PASSWORD);
    raw = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0] ?? 0 }], { redisOptions: { password: CLUSTER_PASSWORD } });
  }, 30_000);

  afterAll(async () => {
    raw.disconnect();
    await cluster.stop();
  });

  it('redis_cluster from the config file: one seed node is enough; set, get, takeToken and delete work', async () => {
    const keyPrefix = uniquePrefix('cluster');
    const store = storeFromConfig(
      {
        redis_cluster: { nodes: [`127.0.0.1:${cluster.ports[0] ?? 0}`], password: '${env:REDIS_PASSWORD}' },
        key_secret: KEY_SECRET,
        key_prefix: keyPrefix,
      },
      { REDIS_PASSWORD: CLUSTER_PASSWORD },
    );
    await exerciseStore(store, keyPrefix, (key) => raw.get(key));
  });

  it('keys in different slots land on different masters and all read back', async () => {
    const keyPrefix = uniquePrefix('cluster');
    const store = directStore({
      cluster: { nodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })), password: CLUSTER_PASSWORD },
      keyPrefix,
    });
    expect(await store.whenReady(READY_WAIT_MS)).toBe(true);
    const keys = Array.from({ length: 30 }, (_, index) => `key-${index}`);
    for (const key of keys) expect(await store.set(key, `${VALUE}-${key}`, 60_000)).toBe(true);
    for (const key of keys) expect(await store.get(key)).toBe(`${VALUE}-${key}`);

    const owners = await Promise.all(cluster.ports.map(async (port) => {
      const node = new Redis({ host: '127.0.0.1', port, password: CLUSTER_PASSWORD });
      try {
        return (await node.keys(`${keyPrefix}*`)).length;
      } finally {
        node.disconnect();
      }
    }));
    expect(owners.filter((count) => count > 0).length).toBeGreaterThan(1);
    expect(owners.reduce((sum, count) => sum + count, 0)).toBe(keys.length);
  });

  it('D9 no reachable seed node → misses and status unavailable, never a throw', async () => {
    const logs = captureLogs();
    const store = directStore({
      cluster: { nodes: [{ host: '127.0.0.1', port: await freePort() }], password: CLUSTER_PASSWORD },
      keyPrefix: uniquePrefix('cluster'),
      logger: logs.logger,
    });
    expect(await store.get('entry')).toBeUndefined();
    expect(await store.set('entry', VALUE, 60_000)).toBe(false);
    expect(await store.takeToken('bucket', BUCKET, 1_000)).toBeUndefined();
    await expect.poll(() => store.status().state, { interval: 20, timeout: READY_WAIT_MS }).toBe('unavailable');
    expect(logs.text()).not.toContain(CLUSTER_PASSWORD);
  });
});
