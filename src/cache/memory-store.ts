import { LRUCache } from 'lru-cache';
import type { CacheStatus, CacheStore } from './store.js';
import { takeFromBucket, type BucketState } from './token-bucket.js';
import { storableTtl } from './ttl.js';

export interface MemoryStoreOptions {
  /** Most entries kept; the least recently used go first. */
  readonly maxEntries?: number;
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

const DEFAULT_MAX_ENTRIES = 10_000;
const READY: CacheStatus = { backend: 'memory', state: 'ready' };

/** The in-process store used when no Redis is configured: same semantics, per-entry TTL, bounded size. */
export function createMemoryStore(options: MemoryStoreOptions = {}): CacheStore {
  const now = options.now ?? Date.now;
  const entries = new LRUCache<string, string>({
    max: options.maxEntries ?? DEFAULT_MAX_ENTRIES,
    perf: { now },
    // Read the clock on every check: an entry must not be served even 1 ms past its TTL.
    ttlResolution: 0,
  });
  return {
    get: (key) => Promise.resolve(entries.get(key)),
    set(key, value, ttlMs) {
      // lru-cache treats ttl 0 as "forever": never hand it one.
      const ttl = storableTtl(ttlMs);
      if (ttl === undefined) return Promise.resolve(false);
      entries.set(key, value, { ttl });
      return Promise.resolve(true);
    },
    delete: (key) => Promise.resolve(entries.delete(key)),
    setIfAbsent(key, value, ttlMs) {
      const ttl = storableTtl(ttlMs);
      if (ttl === undefined || entries.has(key)) return Promise.resolve(false);
      entries.set(key, value, { ttl });
      return Promise.resolve(true);
    },
    deleteIfEquals: (key, value) => Promise.resolve(entries.get(key) === value && entries.delete(key)),
    scan(prefix, limit) {
      const keys: string[] = [];
      for (const key of entries.keys()) {
        if (keys.length >= limit) break;
        if (key.startsWith(prefix) && entries.has(key)) keys.push(key);
      }
      return Promise.resolve(keys);
    },
    takeToken(key, bucket, nowMs) {
      const raw = entries.get(key);
      const { next, result } = takeFromBucket(raw === undefined ? undefined : (JSON.parse(raw) as BucketState), bucket, nowMs);
      // A bucket untouched for a whole refill period is full again: nothing to remember.
      const ttl = storableTtl(bucket.refillMs);
      if (ttl !== undefined) entries.set(key, JSON.stringify(next), { ttl });
      return Promise.resolve(result);
    },
    status: () => READY,
    close() {
      entries.clear();
      return Promise.resolve();
    },
  };
}
