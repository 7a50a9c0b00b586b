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

  it('evicts the least recently used record of a kind beyond that kind\'s bound, and counts it', async () => {
    const evicted: string[] = [];
    const store = createMemoryStore({ bounds: { rate_limits: 2 }, now: clockAt(1_000_000).now, onEvict: (kind) => evicted.push(kind) });
    await store.set('ratelimit:a', '1', 60_000);
    await store.set('ratelimit:b', '2', 60_000);
    await store.get('ratelimit:a');
    await store.set('ratelimit:c', '3', 60_000);
    expect(await store.get('ratelimit:b')).toBeUndefined();
    expect(await store.get('ratelimit:a')).toBe('1');
    expect(await store.get('ratelimit:c')).toBe('3');
    expect(evicted).toEqual(['rate_limits']);
  });

  it('a flood of one kind evicts nothing of another kind', async () => {
    const store = createMemoryStore({ bounds: { consent_links: 100 }, now: clockAt(1_000_000).now });
    await store.set('session:kept', 'owner', 60_000);
    await store.set('grant:route:kept', 'grant', 60_000);
    for (let index = 0; index < 1_000; index += 1) await store.set(`consent-link:${index}`, 'link', 60_000);
    expect(await store.get('session:kept')).toBe('owner');
    expect(await store.get('grant:route:kept')).toBe('grant');
    expect(await store.scan('consent-link:', 10_000)).toHaveLength(100);
  });

  it('keeps negative introspection answers apart: a flood of them leaves positive answers in place', async () => {
    const store = createMemoryStore({ bounds: { introspection: 100, introspection_negative: 100 }, now: clockAt(1_000_000).now });
    await store.set('introspect:ns:valid', 'active', 60_000);
    for (let index = 0; index < 1_000; index += 1) await store.set(`introspect:ns:${index}`, 'inactive', 60_000, { negative: true });
    expect(await store.get('introspect:ns:valid')).toBe('active');
    expect(await store.get('introspect:ns:999')).toBe('inactive');
    expect(await store.get('introspect:ns:0')).toBeUndefined();
  });

  it('an answer that changes sign replaces the old one wherever it was kept', async () => {
    const store = createMemoryStore({ now: clockAt(1_000_000).now });
    await store.set('introspect:ns:t', 'inactive', 60_000, { negative: true });
    await store.set('introspect:ns:t', 'active', 60_000);
    expect(await store.get('introspect:ns:t')).toBe('active');
    expect(await store.delete('introspect:ns:t')).toBe(true);
    expect(await store.get('introspect:ns:t')).toBeUndefined();
  });

  it('touchIfEquals restarts the TTL only while the key holds the value', async () => {
    const clock = clockAt(1_000_000);
    const store = createMemoryStore({ now: clock.now });
    await store.set('grant-epoch:p', 'e1', 1_000);
    expect(await store.touchIfEquals('grant-epoch:p', 'e2', 5_000)).toBe(false);
    expect(await store.touchIfEquals('grant-epoch:p', 'e1', 5_000)).toBe(true);
    clock.advance(4_000);
    expect(await store.get('grant-epoch:p')).toBe('e1');
    expect(await store.touchIfEquals('grant-epoch:absent', 'e1', 5_000)).toBe(false);
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
