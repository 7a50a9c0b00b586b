import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

export type UpstreamBehaviour = (request: RecordedRequest, response: ServerResponse) => void;

export interface TestUpstream {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Replaces how the upstream answers; the default echoes a JSON-RPC result. */
  respondWith(behaviour: UpstreamBehaviour): void;
  close(): Promise<void>;
}

export const jsonRpcEcho: UpstreamBehaviour = (request, response) => {
  let id: unknown = null;
  try {
    id = (JSON.parse(request.body) as { id?: unknown }).id ?? null;
  } catch {
    // GET/DELETE have no body
  }
  response.setHeader('content-type', 'application/json');
  response.setHeader('mcp-session-id', 'session-abc');
  response.end(JSON.stringify({ jsonrpc: '2.0', id, result: { ok: true } }));
};

/** A real HTTP upstream on port 0 that records everything it receives (headers, body) for assertions. */
export async function startTestUpstream(): Promise<TestUpstream> {
  const requests: RecordedRequest[] = [];
  let behaviour: UpstreamBehaviour = jsonRpcEcho;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded: RecordedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      behaviour(recorded, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    requests,
    respondWith: (next) => {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Makes `upstream` hold every request without answering: `reached` resolves when one arrives, `closed` when the
 * gateway drops that exchange (what a client disconnect must cause).
 */
export function neverAnswering(upstream: TestUpstream): { readonly reached: Promise<void>; readonly closed: Promise<void> } {
  let arrived!: () => void;
  let dropped!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  const closed = new Promise<void>((resolve) => (dropped = resolve));
  upstream.respondWith((_request, response) => {
    response.on('close', dropped);
    arrived();
  });
  return { reached, closed };
}
