import { LRUCache } from 'lru-cache';
import { recordKindOf } from './cache-keys.js';
import { FALLBACK_BOUND, type RecordBounds, type RecordKind } from './record-kinds.js';
import type { CacheStatus, CacheStore } from './store.js';
import { takeFromBucket, type BucketState } from './token-bucket.js';
import { storableTtl } from './ttl.js';

/** A bound of the in-process store: a record kind, or `other` for keys of no known kind. */
export type MemoryPartition = RecordKind | 'other';

export interface MemoryStoreOptions {
  /** Most records kept per kind (`cache.memory`); the least recently used of that kind go first. */
  readonly bounds?: RecordBounds;
  /** Called once per record evicted to make room (not for expiry or deletion). */
  readonly onEvict?: (partition: MemoryPartition) => void;
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

const READY: CacheStatus = { backend: 'memory', state: 'ready' };

/**
 * The in-process store used when no Redis is configured: same semantics, per-entry TTL, and one LRU per record
 * kind, so a flood of one kind (garbage tokens' negative answers, consent links) only evicts older records of that
 * kind and never a session or a grant.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): CacheStore {
  const now = options.now ?? Date.now;
  const bounds = options.bounds ?? {};
  const partitions = new Map<MemoryPartition, LRUCache<string, string>>();

  function partition(name: MemoryPartition): LRUCache<string, string> {
    let entries = partitions.get(name);
    if (entries === undefined) {
      entries = new LRUCache<string, string>({
        // Keys of no known kind: none in the gateway, which builds every key in cache-keys.ts.
        max: name === 'other' ? FALLBACK_BOUND : (bounds[name] ?? FALLBACK_BOUND),
        perf: { now },
        // Read the clock on every check: an entry must not be served even 1 ms past its TTL.
        ttlResolution: 0,
        ...(options.onEvict && { dispose: (_value, _key, reason) => reason === 'evict' && options.onEvict?.(name) }),
      });
      partitions.set(name, entries);
    }
    return entries;
  }

  /** Where `key` is written: its kind's partition, negative introspection answers in their own. */
  function writeTo(key: string, negative: boolean | undefined): LRUCache<string, string> {
    const kind = recordKindOf(key) ?? 'other';
    return partition(negative === true && kind === 'introspection' ? 'introspection_negative' : kind);
  }

  /** The partition holding `key` now, if any (an introspection key may sit in either of its two). */
  function holding(key: string): LRUCache<string, string> | undefined {
    const kind = recordKindOf(key) ?? 'other';
    const entries = partitions.get(kind);
    if (entries?.has(key)) return entries;
    const negative = kind === 'introspection' ? partitions.get('introspection_negative') : undefined;
    return negative?.has(key) ? negative : undefined;
  }

  function store(key: string, value: string, ttl: number, negative?: boolean): void {
    const target = writeTo(key, negative);
    const current = holding(key);
    // An answer that changed sign moves: a key lives in one partition only.
    if (current !== undefined && current !== target) current.delete(key);
    target.set(key, value, { ttl });
  }

  return {
    get: (key) => Promise.resolve(holding(key)?.get(key)),
    lookup(key) {
      const value = holding(key)?.get(key);
      return Promise.resolve(value === undefined ? { kind: 'absent' } : { kind: 'found', value });
    },
    set(key, value, ttlMs, setOptions) {
      // lru-cache treats ttl 0 as "forever": never hand it one.
      const ttl = storableTtl(ttlMs);
      if (ttl === undefined) return Promise.resolve(false);
      store(key, value, ttl, setOptions?.negative);
      return Promise.resolve(true);
    },
    delete: (key) => Promise.resolve(holding(key)?.delete(key) ?? false),
    setIfAbsent(key, value, ttlMs) {
      const ttl = storableTtl(ttlMs);
      if (ttl === undefined || holding(key) !== undefined) return Promise.resolve(false);
      store(key, value, ttl);
      return Promise.resolve(true);
    },
    deleteIfEquals(key, value) {
      const entries = holding(key);
      return Promise.resolve(entries?.get(key) === value && entries.delete(key));
    },
    touchIfEquals(key, value, ttlMs) {
      const ttl = storableTtl(ttlMs);
      const entries = holding(key);
      if (ttl === undefined || entries?.get(key) !== value) return Promise.resolve(false);
      entries.set(key, value, { ttl });
      return Promise.resolve(true);
    },
    scan(prefix, limit) {
      const keys: string[] = [];
      const entries = partitions.get(recordKindOf(prefix) ?? 'other');
      for (const key of entries?.keys() ?? []) {
        if (keys.length >= limit) break;
        if (key.startsWith(prefix) && entries?.has(key)) keys.push(key);
      }
      return Promise.resolve(keys);
    },
    takeToken(key, bucket, nowMs) {
      const raw = holding(key)?.get(key);
      const { next, result } = takeFromBucket(raw === undefined ? undefined : (JSON.parse(raw) as BucketState), bucket, nowMs);
      // A bucket untouched for a whole refill period is full again: nothing to remember.
      const ttl = storableTtl(bucket.refillMs);
      if (ttl !== undefined) store(key, JSON.stringify(next), ttl);
      return Promise.resolve(result);
    },
    status: () => READY,
    close() {
      for (const entries of partitions.values()) entries.clear();
      return Promise.resolve();
    },
  };
}
