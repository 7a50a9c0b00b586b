import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { resolveCacheKeySecret } from '../../../src/gateway/cache-store.js';
import { compiled, configWith, parseObject, problems } from './fixtures.js';

const KEY_SECRET = 'k'.repeat(32);
const SENTINEL = { name: 'mymaster', sentinels: ['10.0.0.1:26379', 'sentinel-1.redis:26379'] };
const CLUSTER = { nodes: ['redis-0.redis:6379', 'redis-1.redis:6379'] };
const ENV = { REDIS_PASSWORD: 'data-pw-canary-41b7', SENTINEL_PASSWORD: 'sentinel-pw-canary-0d2e' };

function cacheConfig(cache: Record<string, unknown>) {
  return parseObject(configWith({ cache }), { env: ENV });
}

describe('cache: Redis Sentinel and Cluster settings', () => {
  it('compiles redis_sentinel with its defaults, passwords as secrets', () => {
    const { cache } = compiled(cacheConfig({
      redis_sentinel: { ...SENTINEL, password: '${env:REDIS_PASSWORD}', sentinel_password: '${env:SENTINEL_PASSWORD}' },
      key_secret: KEY_SECRET,
    }));
    expect(cache.redisUrl).toBeUndefined();
    expect(cache.redis).toMatchObject({
      mode: 'sentinel',
      name: 'mymaster',
      sentinels: [{ host: '10.0.0.1', port: 26379 }, { host: 'sentinel-1.redis', port: 26379 }],
      db: 0,
      tls: false,
    });
    const redis = cache.redis?.mode === 'sentinel' ? cache.redis : undefined;
    expect(redis?.password?.reveal()).toBe(ENV.REDIS_PASSWORD);
    expect(redis?.sentinelPassword?.reveal()).toBe(ENV.SENTINEL_PASSWORD);
    const printed = JSON.stringify(cache) + inspect(cache, { depth: null });
    expect(printed).not.toContain(ENV.REDIS_PASSWORD);
    expect(printed).not.toContain(ENV.SENTINEL_PASSWORD);
  });

  it('compiles redis_sentinel with db, tls and an IPv6 sentinel', () => {
    const { cache } = compiled(cacheConfig({
      redis_sentinel: { name: 'cache', sentinels: ['[::1]:26379'], db: 3, tls: true },
      key_secret: KEY_SECRET,
    }));
    expect(cache.redis).toEqual({
      mode: 'sentinel',
      name: 'cache',
      sentinels: [{ host: '::1', port: 26379 }],
      password: undefined,
      sentinelPassword: undefined,
      db: 3,
      tls: true,
    });
  });

  it('compiles redis_cluster', () => {
    const { cache } = compiled(cacheConfig({
      redis_cluster: { ...CLUSTER, password: '${env:REDIS_PASSWORD}', tls: true },
      key_secret: KEY_SECRET,
    }));
    expect(cache.redis).toMatchObject({
      mode: 'cluster',
      nodes: [{ host: 'redis-0.redis', port: 6379 }, { host: 'redis-1.redis', port: 6379 }],
      tls: true,
    });
    expect(cache.redis?.mode === 'cluster' && cache.redis.password?.reveal()).toBe(ENV.REDIS_PASSWORD);
  });

  it('keeps redisUrl for redis_url and also names it as the standalone mode', () => {
    const { cache } = compiled(cacheConfig({ redis_url: 'redis://redis:6379', key_secret: KEY_SECRET }));
    expect(cache.redisUrl?.reveal()).toBe('redis://redis:6379');
    expect(cache.redis?.mode).toBe('standalone');
    expect(cache.redis?.mode === 'standalone' && cache.redis.url.reveal()).toBe('redis://redis:6379');
  });

  it('has no Redis without any of the three', () => {
    expect(compiled(cacheConfig({})).cache.redis).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>]>([
    ['redis_url and redis_sentinel', { redis_url: 'redis://redis:6379', redis_sentinel: SENTINEL }],
    ['redis_url and redis_cluster', { redis_url: 'redis://redis:6379', redis_cluster: CLUSTER }],
    ['redis_sentinel and redis_cluster', { redis_sentinel: SENTINEL, redis_cluster: CLUSTER }],
  ])('refuses %s together, at cache', (_, modes) => {
    expect(problems(cacheConfig({ ...modes, key_secret: KEY_SECRET }))).toEqual([
      { path: 'cache', message: 'set only one of redis_url, redis_sentinel, redis_cluster' },
    ]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['redis_sentinel', { redis_sentinel: SENTINEL }],
    ['redis_cluster', { redis_cluster: CLUSTER }],
  ])('requires key_secret with %s, so replicas share entries', (mode, cache) => {
    expect(problems(cacheConfig(cache))).toEqual([{ path: 'cache.key_secret', message: `is required when ${mode} is set` }]);
  });

  it.each([
    'sentinel-1.redis',
    'sentinel-1.redis:',
    ':26379',
    'host:0',
    'host:65536',
    'host:26379x',
    'host:-1',
    'a b:26379',
    '-host:26379',
    'host_name:26379',
    'redis://host:26379',
    'host:26379/0',
    'user@host:26379',
    '::1:26379',
    '[zz::1]:26379',
    '[::1]',
    '',
  ])('refuses sentinel %j with a message naming its index', (address) => {
    const result = cacheConfig({
      redis_sentinel: { name: 'mymaster', sentinels: ['10.0.0.1:26379', address] },
      key_secret: KEY_SECRET,
    });
    expect(problems(result)).toEqual([{ path: 'cache.redis_sentinel.sentinels.1', message: 'expected host:port' }]);
  });

  it('refuses a malformed cluster node at its index', () => {
    const result = cacheConfig({ redis_cluster: { nodes: ['redis-0:6379', 'redis-1:6379', 'redis-2'] }, key_secret: KEY_SECRET });
    expect(problems(result)).toEqual([{ path: 'cache.redis_cluster.nodes.2', message: 'expected host:port' }]);
  });

  it.each<[string, Record<string, unknown>, string, string | RegExp]>([
    ['no sentinels', { redis_sentinel: { name: 'mymaster', sentinels: [] } }, 'cache.redis_sentinel.sentinels',
      'at least one host:port is required'],
    ['no cluster nodes', { redis_cluster: { nodes: [] } }, 'cache.redis_cluster.nodes', 'at least one host:port is required'],
    ['no master name', { redis_sentinel: { sentinels: ['s:26379'] } }, 'cache.redis_sentinel.name', 'is required'],
    ['an empty master name', { redis_sentinel: { name: '', sentinels: ['s:26379'] } }, 'cache.redis_sentinel.name',
      /too small/i],
    ['a negative db', { redis_sentinel: { ...SENTINEL, db: -1 } }, 'cache.redis_sentinel.db', />=0/],
    ['an empty password', { redis_cluster: { ...CLUSTER, password: '' } }, 'cache.redis_cluster.password', 'must not be empty'],
    ['db on a cluster (only db 0 exists there)', { redis_cluster: { ...CLUSTER, db: 1 } }, 'cache.redis_cluster.db',
      'unknown key'],
  ])('refuses %s', (_, cache, path, message) => {
    const found = problems(cacheConfig({ ...cache, key_secret: KEY_SECRET }));
    expect(found).toHaveLength(1);
    expect(found[0]?.path).toBe(path);
    expect(found[0]?.message).toMatch(message);
  });

  it('warns about literal passwords, never about references', () => {
    const literal = compiled(cacheConfig({
      redis_sentinel: { ...SENTINEL, password: 'literal-1', sentinel_password: 'literal-2' },
      key_secret: '${env:REDIS_PASSWORD}${env:SENTINEL_PASSWORD}',
    }));
    expect(literal.warnings).toEqual(expect.arrayContaining([
      'cache.redis_sentinel.password: literal secret in config; prefer ${env:…} or ${file:…}',
      'cache.redis_sentinel.sentinel_password: literal secret in config; prefer ${env:…} or ${file:…}',
    ]));
    const cluster = compiled(cacheConfig({ redis_cluster: { ...CLUSTER, password: 'literal-3' }, key_secret: KEY_SECRET }));
    expect(cluster.warnings).toContain('cache.redis_cluster.password: literal secret in config; prefer ${env:…} or ${file:…}');

    const referenced = compiled(cacheConfig({
      redis_sentinel: { ...SENTINEL, password: '${env:REDIS_PASSWORD}', sentinel_password: '${env:SENTINEL_PASSWORD}' },
      key_secret: '${env:REDIS_PASSWORD}${env:SENTINEL_PASSWORD}',
    }));
    expect(referenced.warnings.filter((warning) => warning.startsWith('cache.'))).toEqual([]);
  });

  it('the cache key secret is required at run time with Sentinel or Cluster too', () => {
    const { cache } = compiled(cacheConfig({ redis_cluster: CLUSTER, key_secret: KEY_SECRET }));
    expect(() => resolveCacheKeySecret({ ...cache, keySecret: undefined })).toThrow(/key_secret/);
  });
});

describe('cache: command timeout and in-process bounds', () => {
  it('compiles cache.command_timeout and cache.memory bounds, the rest at their defaults', () => {
    const { cache } = compiled(cacheConfig({ command_timeout: '2s', memory: { sessions: 500_000, introspection_negative: 1_000 } }));
    expect(cache.commandTimeout).toBe(2_000);
    expect(cache.memory).toMatchObject({ sessions: 500_000, introspection_negative: 1_000, grants: 20_000 });
  });

  it.each([
    [{ command_timeout: '5ms' }, 'cache.command_timeout', 'at least 10ms'],
    [{ command_timeout: '1m' }, 'cache.command_timeout', 'at most 10s'],
    [{ memory: { sessions: 10 } }, 'cache.memory.sessions', '100'],
    [{ memory: { sessions: 1.5 } }, 'cache.memory.sessions', 'int'],
    [{ memory: { session: 1_000 } }, 'cache.memory.session', 'unknown key'],
  ])('%j is refused at its path', (cache, path, message) => {
    const found = problems(cacheConfig(cache));
    expect(found.some((problem) => problem.path === path && problem.message.includes(message))).toBe(true);
  });
});

