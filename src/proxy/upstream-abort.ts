/**
 * Lets a client disconnect abort its upstream request. reply-from gives undici no AbortSignal, so the proxy marks
 * the outgoing headers with a per-request key and the dispatcher (reload/switching-dispatcher.ts) swaps the key for
 * the request's signal before anything is sent. The marker never leaves the gateway.
 */
export const ABORT_KEY_HEADER = 'x-mcp-gateway-abort-key';

export class UpstreamAbortSignals {
  readonly #signals = new Map<string, AbortSignal>();

  /** Registers `signal` under `key` until `release(key)`. */
  register(key: string, signal: AbortSignal): void {
    this.#signals.set(key, signal);
  }

  release(key: string): void {
    this.#signals.delete(key);
  }

  /** The headers without the marker, and the signal it stood for (none when unmarked or already released). */
  take(headers: unknown): { headers: unknown; signal: AbortSignal | undefined } {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers) || !(ABORT_KEY_HEADER in headers)) {
      return { headers, signal: undefined };
    }
    const { [ABORT_KEY_HEADER]: key, ...rest } = headers as Record<string, unknown>;
    return { headers: rest, signal: typeof key === 'string' ? this.#signals.get(key) : undefined };
  }
}
