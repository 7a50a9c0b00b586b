import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/cache/memory-store.js';

function clockAt(start: number): { now: () => number; advance(ms: number): void } {
  let time = start;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

describe('memory store', () => {
  it('serves an entry for its TTL and not one millisecond longer', async () => {
    const clock = clockAt(1_000_000);
    const store = createMemoryStore({ now: clock.now });
    expect(await store.set('k', 'v', 1_000)).toBe(true);
    clock.advance(1_000);
    expect(await store.get('k')).toBe('v');
    clock.advance(1);
    expect(await store.get('k')).toBeUndefined();
  });

  it('keeps a TTL per entry', async () => {
    const clock = clockAt(1_000_000);
    const store = createMemoryStore({ now: clock.now });
    await store.set('short', 'a', 100);
    await store.set('long', 'b', 10_000);
    clock.advance(5_000);
    expect(await store.get('short')).toBeUndefined();
    expect(await store.get('long')).toBe('b');
  });

  it.each([0, -5, 0.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses TTL %s instead of storing forever', async (ttl) => {
    const store = createMemoryStore({ now: clockAt(1_000_000).now });
    expect(await store.set('k', 'v', ttl)).toBe(false);
    expect(await store.get('k')).toBeUndefined();
  });

  it('rounds a fractional TTL down, never beyond the bound it came from', async () => {
    const clock = clockAt(1_000_000);
    const store = createMemoryStore({ now: clock.now });
    await store.set('k', 'v', 1_000.9);
    clock.advance(1_000.5);
    expect(await store.get('k')).toBeUndefined();
  });

  it('evicts the least recently used entry beyond maxEntries', async () => {
    const store = createMemoryStore({ maxEntries: 2, now: clockAt(1_000_000).now });
    await store.set('a', '1', 60_000);
    await store.set('b', '2', 60_000);
    await store.get('a');
    await store.set('c', '3', 60_000);
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBe('1');
    expect(await store.get('c')).toBe('3');
  });

  it('deletes, reports ready, and forgets everything on close', async () => {
    const store = createMemoryStore({ now: clockAt(1_000_000).now });
    await store.set('a', '1', 60_000);
    await store.set('b', '2', 60_000);
    expect(await store.delete('a')).toBe(true);
    expect(await store.delete('a')).toBe(false);
    expect(store.status()).toEqual({ backend: 'memory', state: 'ready' });
    await store.close();
    expect(await store.get('b')).toBeUndefined();
  });
});
