import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

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
}

export interface RecordingFetchOptions {
  /** A request without response headers after this long is aborted. */
  readonly timeoutMs: number;
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
 * A fetch that bounds every request's wait for its response headers by `timeoutMs`, and records each request's
 * outcome, so a report can say which metadata URL answered and what the others did, without the SDK's discovery
 * functions having to tell. Only the headers: an MCP response may be an SSE stream that stays open on purpose. A
 * request with credentials that fails throws only the description, never the original error's text.
 */
export function recordingFetch(options: RecordingFetchOptions): RecordingFetch {
  const baseFetch = options.fetch ?? fetch;
  const exchanges: Exchange[] = [];
  const recorded: FetchLike = async (url, init) => {
    const method = init?.method ?? 'GET';
    const credentialed = carriesCredentials(init?.headers);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException(timedOut(options.timeoutMs), 'TimeoutError')), options.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
    try {
      const response = await baseFetch(url, { ...init, signal });
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
  return { fetch: recorded, exchanges };
}
