/**
 * A value at once, or a promise of it. The decision's steps return one: on the common path (a verified token from
 * the cache, a static upstream credential) every step can answer at once, and awaiting a settled promise still
 * costs a turn of the microtask queue per step (bench/README.md: ~17 µs per request at one connection).
 * Whoever calls such a step handles both a thrown error and a rejected promise.
 */
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)` at once when the value is at hand, else once it resolves. */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * Runs `step` and tells `done` its outcome, at once when it needed no waiting: for callback-style fastify hooks,
 * where an async hook would cost a microtask turn even when nothing was awaited.
 */
export function settle<T>(step: () => MaybePromise<T>, done: (error: Error | null, value?: T) => void): void {
  let outcome: MaybePromise<T>;
  try {
    outcome = step();
  } catch (error) {
    done(asError(error));
    return;
  }
  if (outcome instanceof Promise) outcome.then((value) => done(null, value), (error: unknown) => done(asError(error)));
  else done(null, outcome);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
