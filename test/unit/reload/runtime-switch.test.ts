import { describe, expect, it } from 'vitest';
import { createRuntimeSwitch, type Cancel } from '../../../src/reload/runtime-switch.js';

/** A scheduler the test fires by hand: retire deadlines without real time passing. */
function manualScheduler() {
  const pending = new Set<() => void>();
  return {
    schedule: (callback: () => void): Cancel => {
      pending.add(callback);
      return () => pending.delete(callback);
    },
    fireAll: () => {
      for (const callback of [...pending]) {
        pending.delete(callback);
        callback();
      }
    },
    size: () => pending.size,
  };
}

function setup() {
  const retired: string[] = [];
  const scheduler = manualScheduler();
  const runtimes = createRuntimeSwitch('v1', {
    retire: (value) => {
      retired.push(value);
      return Promise.resolve();
    },
    retireAfterMs: 60_000,
    schedule: scheduler.schedule,
  });
  return { runtimes, retired, scheduler };
}

describe('runtime switch', () => {
  it('a request keeps the value it pinned; new requests get the swapped one', () => {
    const { runtimes } = setup();
    const first = runtimes.pin();
    runtimes.swap('v2');
    expect(first.value).toBe('v1');
    expect(runtimes.pin().value).toBe('v2');
    expect(runtimes.current()).toBe('v2');
  });

  it('a replaced value is retired when its last request ends, not before', () => {
    const { runtimes, retired, scheduler } = setup();
    const a = runtimes.pin();
    const b = runtimes.pin();
    runtimes.swap('v2');
    a.release();
    expect(retired).toEqual([]);
    b.release();
    b.release();
    expect(retired).toEqual(['v1']);
    expect(scheduler.size()).toBe(0);
  });

  it('an unpinned value is retired at the swap', () => {
    const { runtimes, retired } = setup();
    runtimes.swap('v2');
    runtimes.swap('v3');
    expect(retired).toEqual(['v1', 'v2']);
  });

  it('a long-lived request cannot keep a replaced value past the deadline; it is retired once', () => {
    const { runtimes, retired, scheduler } = setup();
    const stream = runtimes.pin();
    runtimes.swap('v2');
    scheduler.fireAll();
    expect(retired).toEqual(['v1']);
    stream.release();
    expect(retired).toEqual(['v1']);
  });

  it('idle() resolves once every pinned request is released; close() retires everything', async () => {
    const { runtimes, retired } = setup();
    const old = runtimes.pin();
    runtimes.swap('v2');
    const current = runtimes.pin();
    let idle = false;
    const waiting = runtimes.idle().then(() => (idle = true));
    expect(runtimes.inFlight()).toBe(2);
    old.release();
    await Promise.resolve();
    expect(idle).toBe(false);
    current.release();
    await waiting;
    expect(idle).toBe(true);
    await runtimes.close();
    expect(retired).toEqual(['v1', 'v2']);
  });

  it('a failing retire is reported, not thrown', async () => {
    const errors: unknown[] = [];
    const runtimes = createRuntimeSwitch('v1', {
      retire: () => Promise.reject(new Error('close failed')),
      retireAfterMs: 1,
      onRetireError: (error) => errors.push(error),
    });
    await runtimes.close();
    expect(errors).toHaveLength(1);
  });
});
