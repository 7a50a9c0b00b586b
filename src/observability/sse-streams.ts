import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

/**
 * The event streams open to clients, for the `sse_streams_open` gauge and for shutdown: ending a stream cleanly
 * (a complete chunked response, not a reset connection) is what makes an MCP client reconnect — to another
 * replica — and resume with Last-Event-ID.
 */
export interface SseStreams {
  /** A response started relaying `source` as an event stream; it counts as open until the response closes. */
  opened(response: ServerResponse, source: Readable, httpMethod: string): void;
  count(): number;
  /** Ends the open streams whose request method matches, and every matching stream opened from now on. */
  endFrom(matches: (httpMethod: string) => boolean): void;
}

export interface SseStreamEvents {
  readonly onOpen?: () => void;
  readonly onClose?: () => void;
}

interface OpenStream {
  readonly source: Readable;
  readonly httpMethod: string;
}

/** Stops relaying and completes the response; the framework then destroys `source`, which aborts the upstream. */
function endCleanly(response: ServerResponse, source: Readable): void {
  source.unpipe(response);
  if (!response.writableEnded) response.end();
}

export function createSseStreams(events: SseStreamEvents = {}): SseStreams {
  const open = new Map<ServerResponse, OpenStream>();
  let ending: ((httpMethod: string) => boolean) | undefined;

  return {
    opened(response, source, httpMethod) {
      if (open.has(response) || response.writableEnded) return;
      open.set(response, { source, httpMethod });
      events.onOpen?.();
      response.once('close', () => {
        open.delete(response);
        events.onClose?.();
      });
      if (ending?.(httpMethod)) endCleanly(response, source);
    },
    count: () => open.size,
    endFrom(matches) {
      ending = matches;
      for (const [response, stream] of open) {
        if (matches(stream.httpMethod)) endCleanly(response, stream.source);
      }
    },
  };
}
