import { Dispatcher } from 'undici';

/**
 * An undici dispatcher that hands every request to the dispatcher current at that moment, so reply-from (which
 * takes one dispatcher when it is registered) follows config reloads. It owns nothing: closing it is a no-op and
 * each target is closed by whoever retires it (undici's `close()` lets requests already dispatched finish).
 */
export class SwitchingDispatcher extends Dispatcher {
  readonly #target: () => Dispatcher;

  constructor(target: () => Dispatcher) {
    super();
    this.#target = target;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.#target().dispatch(options, handler);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    if (callback) queueMicrotask(callback);
    else return Promise.resolve();
  }

  override destroy(): Promise<void>;
  override destroy(error: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(error: Error | null, callback: () => void): void;
  override destroy(first?: Error | null | (() => void), second?: () => void): Promise<void> | void {
    const callback = typeof first === 'function' ? first : second;
    if (callback) queueMicrotask(callback);
    else return Promise.resolve();
  }
}
