import { afterAll, beforeAll } from 'vitest';

/**
 * A value a test file starts once in `beforeAll` and stops in `afterAll`, read as if it were there from the start:
 * reading it outside hooks and tests (at collection time, before it started) throws instead of yielding undefined.
 */
export function suiteValue<T extends object>(what: string, start: () => Promise<T>, stop: (value: T) => Promise<void>): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await start();
  });
  afterAll(async () => {
    if (value) await stop(value);
  });
  return new Proxy({} as T, {
    get(_target, key) {
      if (!value) throw new Error(`${what} starts in beforeAll: read it inside hooks and tests`);
      return Reflect.get(value, key) as unknown;
    },
  });
}
