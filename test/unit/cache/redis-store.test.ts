import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCacheStore } from '../../../src/gateway/cache-store.js';
import { createRedisStore, type RedisStore } from '../../../src/cache/redis-store.js';
import { Secret } from '../../../src/config/secret.js';
import { captureLogs } from '../../helpers/capture-logs.js';
import { freePort, startSilentServer } from '../../helpers/net.js';
import {
  spawnRedis,
  startRedis,
  uniquePrefix,
  type RedisHandle,
} from '../../helpers/redis.js';

const KEY = 'key-canary-91d2';
const VALUE = 'value-canary-4be7';
const READY_WAIT_MS = 10_000;

let redis: RedisHandle;
let raw: Redis;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
});

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

afterAll(async () => {
  raw.disconnect();
  await redis.stop();
});

function store(url: string, options: Partial<Parameters<typeof createRedisStore>[0]> = {}): RedisStore {
  const created = createRedisStore({ url, keyPrefix: uniquePrefix('redis-store'), ...options });
  cleanups.push(() => created.close());
  return created;
}

describe('redis store against a real Redis', () => {
  it('stores under the key prefix with a PX TTL no longer than asked, and deletes', async () => {
    const keyPrefix = uniquePrefix('redis-store');
    const cache = store(redis.url, { keyPrefix });
    expect(await cache.whenReady(READY_WAIT_MS)).toBe(true);
    expect(cache.status()).toEqual({ backend: 'redis', state: 'ready', connectedOnce: true });

    expect(await cache.set(KEY, VALUE, 20_000.7)).toBe(true);
    expect(await cache.get(KEY)).toBe(VALUE);
    const ttl = await raw.pttl(`${keyPrefix}${KEY}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(20_000);

    expect(await cache.delete(KEY)).toBe(true);
    expect(await cache.delete(KEY)).toBe(false);
    expect(await cache.get(KEY)).toBeUndefined();
  });

  it.each([0, -1, Number.NaN])('refuses TTL %s', async (ttl) => {
    const keyPrefix = uniquePrefix('redis-store');
    const cache = store(redis.url, { keyPrefix });
    await cache.whenReady(READY_WAIT_MS);
    expect(await cache.set(KEY, VALUE, ttl)).toBe(false);
    expect(await raw.exists(`${keyPrefix}${KEY}`)).toBe(0);
  });
});

describe('D9 redis store faults: a miss, never a throw or a hang', () => {
  it('D9 connection refused → misses, status unavailable, one warning without keys or values', async () => {
    const logs = captureLogs();
    const cache = store(`redis://127.0.0.1:${await freePort()}`, { logger: logs.logger });
    expect(await cache.get(KEY)).toBeUndefined();
    // A failed read is no answer, never "absent" (session bindings and grants tell the two apart).
    expect(await cache.lookup(KEY)).toEqual({ kind: 'unavailable' });
    expect(await cache.set(KEY, VALUE, 1_000)).toBe(false);
    expect(await cache.delete(KEY)).toBe(false);
    expect(cache.status()).toEqual({ backend: 'redis', state: 'unavailable', connectedOnce: false });
    const warnings = logs.lines.filter((line) => line.includes('"level":40'));
    expect(warnings).toHaveLength(1);
    expect(logs.text()).not.toContain(KEY);
    expect(logs.text()).not.toContain(VALUE);
  });

  it('D9 a server that accepts and never answers → misses, not ready', async () => {
    const silent = await startSilentServer();
    cleanups.push(() => silent.close());
    const cache = store(silent.url);
    expect(await cache.get(KEY)).toBeUndefined();
    expect(await cache.set(KEY, VALUE, 1_000)).toBe(false);
    expect(cache.status().state).not.toBe('ready');
  });

  it('D9 a connected Redis that stops answering → commands time out as misses; answers again after it resumes', async () => {
    const spawned = await spawnRedis();
    cleanups.push(() => spawned.stop());
    const logs = captureLogs();
    // Generous enough that a loaded machine never times out the commands meant to succeed.
    const cache = store(spawned.url, { logger: logs.logger, commandTimeoutMs: 1_000 });
    expect(await cache.whenReady(READY_WAIT_MS)).toBe(true);
    expect(await cache.set(KEY, VALUE, 60_000)).toBe(true);

    spawned.freeze();
    expect(await cache.get(KEY)).toBeUndefined();
    expect(await cache.set(KEY, VALUE, 60_000)).toBe(false);
    expect(cache.status().state).toBe('unavailable');
    expect(logs.text()).toContain('COMMAND_TIMEOUT');
    expect(logs.text()).not.toContain(KEY);

    spawned.thaw();
    // The timed-out commands' replies arrive first and are dropped; a fresh command succeeds.
    await expect.poll(() => cache.get(KEY), { interval: 20, timeout: 5_000 }).toBe(VALUE);
    expect(cache.status()).toEqual({ backend: 'redis', state: 'ready', connectedOnce: true });
  });

  it('D9 a read-only replica → writes refused as false, reads still answered', async () => {
    const spawned = await spawnRedis(['--replicaof', '127.0.0.1', String(await freePort())]);
    cleanups.push(() => spawned.stop());
    const logs = captureLogs();
    const cache = store(spawned.url, { logger: logs.logger });
    expect(await cache.whenReady(READY_WAIT_MS)).toBe(true);
    expect(await cache.set(KEY, VALUE, 60_000)).toBe(false);
    expect(logs.text()).toContain('READONLY');
    expect(logs.text()).not.toContain(KEY);
    expect(logs.text()).not.toContain(VALUE);
  });

  it('I12 Redis killed → misses; restarted → the store reconnects by itself and stores again', async () => {
    const spawned = await spawnRedis();
    cleanups.push(() => spawned.stop());
    const logs = captureLogs();
    const cache = store(spawned.url, { logger: logs.logger });
    expect(await cache.whenReady(READY_WAIT_MS)).toBe(true);

    await spawned.kill();
    expect(await cache.get(KEY)).toBeUndefined();
    expect(await cache.set(KEY, VALUE, 60_000)).toBe(false);
    expect(cache.status().state).not.toBe('ready');

    await spawned.restart();
    expect(await cache.whenReady(READY_WAIT_MS)).toBe(true);
    expect(await cache.set(KEY, VALUE, 60_000)).toBe(true);
    expect(await cache.get(KEY)).toBe(VALUE);
    expect(cache.status()).toEqual({ backend: 'redis', state: 'ready', connectedOnce: true });
    expect(logs.text()).toContain('redis cache available again');
  });
});

describe('redis store URLs', () => {
  it.each(['redis://127.0.0.1:1', 'rediss://127.0.0.1:1', 'redis://:password@127.0.0.1:1/2'])('accepts %s', async (url) => {
    const cache = createRedisStore({ url, keyPrefix: 'p:' });
    expect(cache.status().backend).toBe('redis');
    await cache.close();
  });

  it.each(['http://127.0.0.1:6379', 'redis+sentinel://127.0.0.1:26379', 'not a url'])('rejects %s', (url) => {
    expect(() => createRedisStore({ url, keyPrefix: 'p:' })).toThrow(/redis_url/);
  });

  it('never puts the URL (and its password) in a log line', async () => {
    const logs = captureLogs();
    const port = await freePort();
    const cache = store(`redis://:pw-canary-77@127.0.0.1:${port}`, { logger: logs.logger });
    await cache.get(KEY);
    expect(logs.lines.length).toBeGreaterThan(0);
    expect(logs.text()).not.toContain('pw-canary-77');
  });
});

describe('createCacheStore', () => {
  it('is the in-process store without redis_url', async () => {
    const cache = createCacheStore({ redisUrl: undefined, keySecret: undefined, keyPrefix: 'p:' });
    expect(cache.status()).toEqual({ backend: 'memory', state: 'ready' });
    await cache.close();
  });

  it('is Redis with redis_url, under the configured prefix', async () => {
    const keyPrefix = uniquePrefix('create-store');
    const cache = createCacheStore({ redisUrl: new Secret(redis.url), keySecret: new Secret('k'.repeat(32)), keyPrefix });
    cleanups.push(() => cache.close());
    await expect.poll(() => cache.set(KEY, VALUE, 60_000), { interval: 20, timeout: READY_WAIT_MS }).toBe(true);
    expect(await raw.get(`${keyPrefix}${KEY}`)).toBe(VALUE);
    expect(cache.status()).toEqual({ backend: 'redis', state: 'ready', connectedOnce: true });
  });
});
