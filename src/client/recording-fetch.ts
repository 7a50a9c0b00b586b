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
  /** Each request is aborted after this long. */
  readonly timeoutMs: number;
  readonly fetch?: FetchLike;
}

/** The cause of a failed fetch in a few words ("connect ECONNREFUSED 127.0.0.1:1", "timed out after 10 s"). */
export function describeFetchError(error: unknown, timeoutMs: number): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return `timed out after ${timeoutMs / 1000} s`;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * A fetch that bounds every request by `timeoutMs` and records each request's outcome, so a report can say which
 * metadata URL answered and what the others did, without the SDK's discovery functions having to tell.
 */
export function recordingFetch(options: RecordingFetchOptions): RecordingFetch {
  const baseFetch = options.fetch ?? fetch;
  const exchanges: Exchange[] = [];
  const recorded: FetchLike = async (url, init) => {
    const method = init?.method ?? 'GET';
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    try {
      const response = await baseFetch(url, { ...init, signal });
      exchanges.push({ method, url: String(url), status: response.status });
      return response;
    } catch (error) {
      exchanges.push({ method, url: String(url), error: describeFetchError(error, options.timeoutMs) });
      throw error;
    }
  };
  return { fetch: recorded, exchanges };
}
