import { describe, expect, it } from 'vitest';
import { andThen, settle, type MaybePromise } from '../../../src/lib/maybe-promise.js';

/** What `settle` told its callback, in order. */
function outcomes<T>(): { seen: [Error | null, T | undefined][]; done: (error: Error | null, value?: T) => void } {
  const seen: [Error | null, T | undefined][] = [];
  return { seen, done: (error, value) => void seen.push([error, value]) };
}

describe('andThen', () => {
  it('continues at once with a value at hand: no promise', () => {
    expect(andThen(2, (value) => value * 3)).toBe(6);
  });

  it('continues once a promise resolves, and passes a rejection on', async () => {
    const later = andThen(Promise.resolve(2), (value) => value * 3);
    expect(later).toBeInstanceOf(Promise);
    await expect(later).resolves.toBe(6);
    await expect(andThen(Promise.reject(new Error('refused')), () => 1)).rejects.toThrow('refused');
  });

  it('lets a step that goes on asynchronously make the whole chain a promise', async () => {
    const chained: MaybePromise<number> = andThen(2, (value) => Promise.resolve(value + 1));
    await expect(chained).resolves.toBe(3);
  });
});

describe('settle', () => {
  it('tells a value at hand before it returns (a callback hook goes on in the same turn)', () => {
    const { seen, done } = outcomes<number>();
    settle(() => 7, done);
    expect(seen).toEqual([[null, 7]]);
  });

  it('tells a thrown refusal at once, as an Error', () => {
    const { seen, done } = outcomes<number>();
    settle(() => {
      throw new RangeError('refused');
    }, done);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.[0]).toBeInstanceOf(RangeError);
  });

  it('tells a promised value or rejection once settled, never twice', async () => {
    const resolved = outcomes<number>();
    settle(() => Promise.resolve(5), resolved.done);
    expect(resolved.seen).toEqual([]);
    await Promise.resolve();
    expect(resolved.seen).toEqual([[null, 5]]);

    const rejected = outcomes<number>();
    settle(() => Promise.reject(new TypeError('refused')), rejected.done);
    await Promise.resolve();
    expect(rejected.seen).toHaveLength(1);
    expect(rejected.seen[0]?.[0]).toBeInstanceOf(TypeError);
  });
});
