import { createValueSealer, type ValueSealer } from '../cache/sealed-value.js';
import type { CacheStore, Lookup } from '../cache/store.js';
import type { z } from 'zod';

export type { Lookup } from '../cache/store.js';

/**
 * Records the consent pages and user grants keep in the cache store (Redis across replicas): JSON sealed with
 * AES-256-GCM under a key derived from the cache key secret, the store key as associated data, so nothing in a
 * Redis dump is readable and a value copied under another key does not open.
 */
export interface SealedRecords<T> {
  get(key: string): Promise<Lookup<T>>;
  put(key: string, value: T, ttlMs: number): Promise<boolean>;
  /** Stores `value` only when `key` holds nothing (atomically across replicas on Redis). */
  putIfAbsent(key: string, value: T, ttlMs: number): Promise<boolean>;
  /** Single use: `found` for exactly one caller, the one whose delete removed the record. */
  take(key: string): Promise<Lookup<T>>;
  delete(key: string): Promise<boolean>;
}

/** The record `sealed` holds, when it opens under `key` (this key secret, sealed for this key) and fits `schema`. */
export function openRecord<T>(sealer: ValueSealer, key: string, sealed: string, schema: z.ZodType<T>): T | undefined {
  const text = sealer.open(key, sealed);
  if (text === undefined) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function createSealedRecords<T>(store: CacheStore, keySecret: Buffer, purpose: string, schema: z.ZodType<T>): SealedRecords<T> {
  const sealer: ValueSealer = createValueSealer(keySecret, purpose);
  const unavailable = () => store.status().state !== 'ready';

  async function get(key: string): Promise<Lookup<T>> {
    const sealed = await store.lookup(key);
    if (sealed.kind !== 'found') return sealed;
    const value = openRecord(sealer, key, sealed.value, schema);
    // A value that does not open (another key secret, tampered with) counts as nothing.
    return value === undefined ? { kind: 'absent' } : { kind: 'found', value };
  }

  return {
    get,
    put: (key, value, ttlMs) => store.set(key, sealer.seal(key, JSON.stringify(value)), ttlMs),
    putIfAbsent: (key, value, ttlMs) => store.setIfAbsent(key, sealer.seal(key, JSON.stringify(value)), ttlMs),
    async take(key) {
      const found = await get(key);
      if (found.kind !== 'found') return found;
      if (await store.delete(key)) return found;
      return unavailable() ? { kind: 'unavailable' } : { kind: 'absent' };
    },
    delete: (key) => store.delete(key),
  };
}
