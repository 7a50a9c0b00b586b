import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The bench's trivial MCP-shaped upstream (a child process):
 * - POST: reads the body, answers a small fixed JSON-RPC result
 * - GET with `x-bench-events: N`: an SSE stream of N numbered events, then the end
 * - GET without it: an SSE stream that sends one comment and stays open until the client leaves
 */
const RESULT = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '3' }] } });
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

function answerPost(request: IncomingMessage, response: ServerResponse): void {
  request.on('data', () => undefined);
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(RESULT) });
    response.end(RESULT);
  });
}

/** Writes `count` events, pausing whenever the socket buffer is full: a real server's pace, not a memory dump. */
function streamEvents(response: ServerResponse, count: number): void {
  response.writeHead(200, SSE_HEADERS);
  let next = 0;
  const writeSome = (): void => {
    while (next < count) {
      const event = `id: ${next}\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"i":${next}}}\n\n`;
      next += 1;
      if (!response.write(event)) {
        response.once('drain', writeSome);
        return;
      }
    }
    response.end();
  };
  writeSome();
}

function holdOpen(response: ServerResponse): void {
  response.writeHead(200, SSE_HEADERS);
  response.write(': open\n\n');
}

const server = createServer((request, response) => {
  if (request.method === 'POST') return answerPost(request, response);
  const events = Number(request.headers['x-bench-events']);
  if (Number.isInteger(events) && events > 0) return streamEvents(response, events);
  return holdOpen(response);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}/mcp` });
});
process.on('SIGTERM', () => process.exit(0));
