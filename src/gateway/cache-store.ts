import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { CacheSettings, RedisConnection } from '../config/types.js';
import { createMemoryStore, type MemoryPartition } from '../cache/memory-store.js';
import { createRedisStore, type RedisTarget } from '../cache/redis-store.js';
import type { CacheStore } from '../cache/store.js';

export interface CacheStoreOptions {
  /** Overrides `cache.command_timeout` (operator commands may wait longer than a request). */
  readonly commandTimeoutMs?: number;
  /** A record of the in-process store evicted to make room (`mcp_gateway_cache_evictions_total`). */
  readonly onEvict?: (partition: MemoryPartition) => void;
}

/** Redis when one of `cache.redis_url`, `redis_sentinel`, `redis_cluster` is configured, else the in-process LRUs. */
export function createCacheStore(settings: CacheSettings, logger?: Logger, options: CacheStoreOptions = {}): CacheStore {
  const connection = redisConnection(settings);
  if (!connection) return createMemoryStore({ bounds: settings.memory, ...(options.onEvict && { onEvict: options.onEvict }) });
  const commandTimeoutMs = options.commandTimeoutMs ?? settings.commandTimeout;
  return createRedisStore({ ...redisTarget(connection), keyPrefix: settings.keyPrefix, logger, ...(commandTimeoutMs !== undefined && { commandTimeoutMs }) });
}

/** Settings built without `redis` (before Sentinel/Cluster support) still mean standalone Redis by `redisUrl`. */
function redisConnection(settings: CacheSettings): RedisConnection | undefined {
  if (settings.redis) return settings.redis;
  return settings.redisUrl && { mode: 'standalone', url: settings.redisUrl };
}

/** Secrets are revealed here, where the client is built. */
function redisTarget(connection: RedisConnection): RedisTarget {
  switch (connection.mode) {
    case 'standalone':
      return { url: connection.url.reveal() };
    case 'sentinel':
      return {
        sentinel: {
          name: connection.name,
          sentinels: connection.sentinels,
          password: connection.password?.reveal(),
          sentinelPassword: connection.sentinelPassword?.reveal(),
          db: connection.db,
          tls: connection.tls,
        },
      };
    case 'cluster':
      return { cluster: { nodes: connection.nodes, password: connection.password?.reveal(), tls: connection.tls } };
  }
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
