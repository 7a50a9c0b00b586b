/**
 * Holds the value every new request starts on (the gateway's runtime) and swaps it atomically on reload. A request
 * pins the value it started on; a replaced value is retired (verifiers, upstream agent closed) once nothing pins it
 * any more, or after `retireAfterMs` at the latest, so a long-lived stream cannot keep old resources forever.
 */
export interface RuntimeSwitch<T> {
  current(): T;
  /** The current value for one request; call `release` exactly once when the request is over. */
  pin(): { readonly value: T; readonly release: () => void };
  /** Requests pinned and not released, over every value. */
  inFlight(): number;
  /** Resolves when no request is in flight. */
  readonly idle: () => Promise<void>;
  /** Makes `next` current; the previous value is retired later (see above). */
  swap(next: T): void;
  /** Retires every value now, the current one included. */
  close(): Promise<void>;
}

/** Cancels a scheduled call. */
export type Cancel = () => void;

export interface RuntimeSwitchOptions<T> {
  readonly retire: (value: T) => Promise<void>;
  /** Upper bound between a swap and retiring the replaced value, whatever still pins it. */
  readonly retireAfterMs: number;
  /** Injected in tests; default `setTimeout` that does not keep the process alive. */
  readonly schedule?: (callback: () => void, delayMs: number) => Cancel;
  /** A retire that failed: nothing is left to undo, so it is only reported. */
  readonly onRetireError?: (error: unknown) => void;
}

interface Slot<T> {
  readonly value: T;
  pins: number;
  retired: Promise<void> | undefined;
  cancelDeadline: Cancel | undefined;
}

function unrefTimeout(callback: () => void, delayMs: number): Cancel {
  const timer = setTimeout(callback, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
}

export function createRuntimeSwitch<T>(initial: T, options: RuntimeSwitchOptions<T>): RuntimeSwitch<T> {
  const schedule = options.schedule ?? unrefTimeout;
  const newSlot = (value: T): Slot<T> => ({ value, pins: 0, retired: undefined, cancelDeadline: undefined });
  let active = newSlot(initial);
  /** Replaced values not yet retired. */
  const replaced = new Set<Slot<T>>();
  let waiters: (() => void)[] = [];

  const inFlight = () => [active, ...replaced].reduce((sum, slot) => sum + slot.pins, 0);

  function retire(slot: Slot<T>): Promise<void> {
    slot.cancelDeadline?.();
    replaced.delete(slot);
    slot.retired ??= options.retire(slot.value).catch((error: unknown) => options.onRetireError?.(error));
    return slot.retired;
  }

  function released(slot: Slot<T>): void {
    slot.pins -= 1;
    if (slot !== active && slot.pins === 0) void retire(slot);
    // Only shutdown waits for idleness: skip the count on every ordinary request close.
    if (waiters.length > 0 && inFlight() === 0) {
      const done = waiters;
      waiters = [];
      for (const resolve of done) resolve();
    }
  }

  return {
    current: () => active.value,
    pin() {
      const slot = active;
      slot.pins += 1;
      let done = false;
      return {
        value: slot.value,
        release: () => {
          if (done) return;
          done = true;
          released(slot);
        },
      };
    },
    inFlight,
    idle: () => (inFlight() === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    swap(next) {
      const previous = active;
      active = newSlot(next);
      if (previous.pins === 0) {
        void retire(previous);
        return;
      }
      replaced.add(previous);
      previous.cancelDeadline = schedule(() => void retire(previous), options.retireAfterMs);
    },
    async close() {
      await Promise.all([...replaced, active].map(retire));
    },
  };
}
