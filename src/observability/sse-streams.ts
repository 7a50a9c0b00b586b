import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { InFlightList } from '../lib/in-flight-list.js';

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
  readonly response: ServerResponse;
  readonly source: Readable;
  readonly httpMethod: string;
}

const COUNTED = Symbol('counted event stream');

/** Marks a response whose stream is counted, so a second 'pipe' does not count it twice. */
type CountedResponse = ServerResponse & { [COUNTED]?: true };

/** Stops relaying and completes the response; the framework then destroys `source`, which aborts the upstream. */
function endCleanly(response: ServerResponse, source: Readable): void {
  source.unpipe(response);
  if (!response.writableEnded) response.end();
}

export function createSseStreams(events: SseStreamEvents = {}): SseStreams {
  // Not a Map keyed by response: see InFlightList (an MCP server may answer every POST with an event stream).
  const open = new InFlightList<OpenStream>();
  let ending: ((httpMethod: string) => boolean) | undefined;

  return {
    opened(response: CountedResponse, source, httpMethod) {
      if (response[COUNTED] || response.writableEnded) return;
      response[COUNTED] = true;
      const listed = open.add({ response, source, httpMethod });
      events.onOpen?.();
      response.once('close', () => {
        open.remove(listed);
        events.onClose?.();
      });
      if (ending?.(httpMethod)) endCleanly(response, source);
    },
    count: () => open.size,
    endFrom(matches) {
      ending = matches;
      for (const stream of open) {
        if (matches(stream.httpMethod)) endCleanly(stream.response, stream.source);
      }
    },
  };
}
