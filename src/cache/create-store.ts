import type { Logger } from 'pino';
import type { CacheSettings } from '../config/types.js';
import { createMemoryStore } from './memory-store.js';
import { createRedisStore } from './redis-store.js';
import type { CacheStore } from './store.js';

/** Redis when `cache.redis_url` is configured, else the in-process LRU with the same semantics. */
export function createCacheStore(settings: CacheSettings, logger?: Logger): CacheStore {
  if (!settings.redisUrl) return createMemoryStore();
  return createRedisStore({ url: settings.redisUrl.reveal(), keyPrefix: settings.keyPrefix, logger });
}
