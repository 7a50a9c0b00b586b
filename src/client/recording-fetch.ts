import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent, type Dispatcher } from 'undici';
import { AddressRefusedError, type AddressPolicy } from './address-policy.js';

/** One HTTP request the client made and how it ended: a status, or why there was none. Never a header or a body. */
export interface Exchange {
  readonly method: string;
  readonly url: string;
  readonly status?: number;
  readonly error?: string;
}

export interface RecordingFetch {
  /** Hand this to the SDK's discovery functions and to the MCP transport. */
  readonly fetch: FetchLike;
  /** Every request so far, oldest first; discovery reads the ones its own calls added to tell which URL answered. */
  readonly exchanges: readonly Exchange[];
  /** Which hosts requests may go to, redirects included. */
  readonly addresses: AddressPolicy;
  /** Closes the connections kept alive for the run. */
  close(): Promise<void>;
}

export interface RecordingFetchOptions {
  /** A request without response headers after this long is aborted. */
  readonly timeoutMs: number;
  /** Checked for every request and every redirect it follows, before a connection is made. */
  readonly addresses: AddressPolicy;
  readonly fetch?: FetchLike;
}

function timedOut(timeoutMs: number): string {
  return `timed out after ${timeoutMs / 1000} s`;
}

/**
 * The cause of a failed fetch in a few words ("connect ECONNREFUSED 127.0.0.1:1", "timed out after 10 s"). For a
 * request that carried credentials only the error's code: fetch quotes a header value it rejects, token included.
 */
export function describeFetchError(error: unknown, timeoutMs: number, credentialed = false): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return timedOut(timeoutMs);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  // Written here, from the URL alone: it carries nothing of the request.
  if (cause instanceof AddressRefusedError) return cause.message;
  if (!credentialed) return cause instanceof Error ? cause.message : String(cause);
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : 'failed (the error text is not shown: the request carried a token)';
}

/** Whether the request has an Authorization header, read without building a `Headers` (which validates values). */
function carriesCredentials(headers: RequestInit['headers']): boolean {
  if (headers === undefined) return false;
  const names = headers instanceof Headers ? [...headers.keys()] : Array.isArray(headers) ? headers.map(([name]) => name) : Object.keys(headers);
  return names.some((name) => name?.toLowerCase() === 'authorization');
}

/**
 * A dispatcher that asks `addresses` before every request it carries: fetch sends each redirect it follows through
 * the dispatcher again, so every hop is judged, not only the first URL.
 */
function guardedDispatcher(addresses: AddressPolicy): Dispatcher {
  const guard: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (request, handler) => {
    const refusal = addresses.refusal(String(request.origin));
    if (refusal === undefined) return dispatch(request, handler);
    handler.onError?.(new AddressRefusedError(refusal));
    return false;
  };
  // Closing the composed dispatcher closes the agent under it.
  return new Agent().compose(guard);
}

/**
 * The one fetch of `probe` and `login`: every request passes `options.addresses` (each redirect hop too), a
 * request carrying credentials never follows a redirect (its answer is returned for the caller to report: another
 * server's answer must not pass for this one's, nor get the token), every request's wait for its response headers
 * is bounded by `timeoutMs`, and each request's outcome is recorded, so a report can say which metadata URL answered
 * and what the others did, without the SDK's discovery functions having to tell. Only the headers: an MCP response
 * may be an SSE stream that stays open on purpose. A request with credentials that fails throws only the
 * description, never the original error's text.
 */
export function recordingFetch(options: RecordingFetchOptions): RecordingFetch {
  const baseFetch = options.fetch ?? fetch;
  const dispatcher = guardedDispatcher(options.addresses);
  const exchanges: Exchange[] = [];
  const recorded: FetchLike = async (url, init) => {
    const method = init?.method ?? 'GET';
    const credentialed = carriesCredentials(init?.headers);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException(timedOut(options.timeoutMs), 'TimeoutError')), options.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
    const redirect = init?.redirect ?? (credentialed ? 'manual' : 'follow');
    try {
      // Checked here too, not only in the dispatcher: a fetch given for tests may not use it.
      const refusal = options.addresses.refusal(url);
      if (refusal !== undefined) throw new TypeError('fetch failed', { cause: new AddressRefusedError(refusal) });
      // `dispatcher` is Node's fetch extension (its undici), typed against Node's bundled undici version.
      const response = await baseFetch(url, { ...init, redirect, signal, dispatcher } as unknown as RequestInit);
      exchanges.push({ method, url: String(url), status: response.status });
      return response;
    } catch (error) {
      const description = describeFetchError(error, options.timeoutMs, credentialed);
      exchanges.push({ method, url: String(url), error: description });
      throw credentialed ? new Error(`${method} ${String(url)}: ${description}`) : error;
    } finally {
      clearTimeout(timer);
    }
  };
  return { fetch: recorded, exchanges, addresses: options.addresses, close: () => dispatcher.close() };
}
