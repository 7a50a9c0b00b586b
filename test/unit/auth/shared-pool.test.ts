import { describe, expect, it } from 'vitest';
import { createSharedPool } from '../../../src/auth/shared-pool.js';

describe('createSharedPool', () => {
  it('K8 holders of one key share one value; it outlives the first holder and is dropped with the last', () => {
    const pool = createSharedPool<{ readonly made: number }>();
    let made = 0;
    const create = () => ({ made: ++made });
    const old = pool.acquire('issuer', create);
    const replacement = pool.acquire('issuer', create);
    expect(replacement.value).toBe(old.value);
    old.release();
    old.release();
    expect(pool.acquire('issuer', create).value).toBe(replacement.value);
    expect(made).toBe(1);
  });

  it('a key nobody holds any more starts over; other keys are separate', () => {
    const pool = createSharedPool<object>();
    const first = pool.acquire('a', () => ({}));
    const other = pool.acquire('b', () => ({}));
    expect(other.value).not.toBe(first.value);
    first.release();
    expect(pool.acquire('a', () => ({})).value).not.toBe(first.value);
  });

  it('the value is disposed once, when its last holder releases it', () => {
    const disposed: string[] = [];
    const pool = createSharedPool<string>((value) => disposed.push(value));
    const first = pool.acquire('issuer', () => 'keys');
    const second = pool.acquire('issuer', () => 'other');
    first.release();
    expect(disposed).toEqual([]);
    second.release();
    second.release();
    expect(disposed).toEqual(['keys']);
  });
});
