import { Dispatcher } from 'undici';
import type { UpstreamAbortSignals } from '../proxy/upstream-abort.js';

/**
 * An undici dispatcher that hands every request to the dispatcher current at that moment, so reply-from (which
 * takes one dispatcher when it is registered) follows config reloads. It owns nothing: closing it is a no-op and
 * each target is closed by whoever retires it (undici's `close()` lets requests already dispatched finish).
 */
export class SwitchingDispatcher extends Dispatcher {
  readonly #target: () => Dispatcher;
  readonly #abortSignals: UpstreamAbortSignals | undefined;

  constructor(target: () => Dispatcher, abortSignals?: UpstreamAbortSignals) {
    super();
    this.#target = target;
    this.#abortSignals = abortSignals;
  }

  /** Attaches the request's abort signal (see proxy/upstream-abort.ts) so a client disconnect aborts it. */
  override request<TOpaque = null>(
    options: Dispatcher.RequestOptions<TOpaque>,
    callback: (err: Error | null, data: Dispatcher.ResponseData<TOpaque>) => void,
  ): void;
  override request<TOpaque = null>(options: Dispatcher.RequestOptions<TOpaque>): Promise<Dispatcher.ResponseData<TOpaque>>;
  override request<TOpaque = null>(
    options: Dispatcher.RequestOptions<TOpaque>,
    callback?: (err: Error | null, data: Dispatcher.ResponseData<TOpaque>) => void,
  ): void | Promise<Dispatcher.ResponseData<TOpaque>> {
    const { headers, signal } = this.#abortSignals?.take(options.headers) ?? { headers: options.headers, signal: undefined };
    const withSignal = { ...options, headers: headers as Dispatcher.RequestOptions<TOpaque>['headers'], ...(signal && { signal }) };
    return callback ? super.request(withSignal, callback) : super.request(withSignal);
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
