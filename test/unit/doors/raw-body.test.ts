import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayError } from '../../../src/decision/index.js';
import { readRawBody, readsBody } from '../../../src/doors/shared/raw-body.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

interface Outcome {
  readonly error?: GatewayError;
  readonly body?: Buffer;
  readonly reads: boolean;
}

/** A server that reads each request's body with `limit` and reports the outcome. */
async function reader(limit: number): Promise<{ port: number; outcomes: Outcome[]; arrived: () => number }> {
  const outcomes: Outcome[] = [];
  let arrived = 0;
  const server = createServer((request, response) => {
    arrived += 1;
    const reads = readsBody(request);
    if (!reads) {
      outcomes.push({ reads });
      response.end();
      return;
    }
    readRawBody(request, limit, (error, body) => {
      outcomes.push({ reads, ...(error && { error }), ...(body && { body }) });
      response.writeHead(error ? 413 : 200, { connection: 'close' }).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, outcomes, arrived: () => arrived };
}

describe('raw body on Node’s own request (the proxy door)', () => {
  it('keeps the exact bytes received, chunked ones too', async () => {
    const { port, outcomes } = await reader(1024);
    const body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","note":"é \\u00e9"}';
    await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', body });
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body.slice(0, 10)));
        controller.enqueue(new TextEncoder().encode(body.slice(10)));
        controller.close();
      },
    });
    await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', body: chunked, duplex: 'half' });
    expect(outcomes.map((outcome) => outcome.body?.toString('utf8'))).toEqual([body, body]);
  });

  it('K10 a chunked body growing past the limit is refused payload_too_large as soon as it does', async () => {
    const { port, outcomes } = await reader(16);
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array(10));
        controller.enqueue(new Uint8Array(10));
        controller.close();
      },
    });
    const response = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', body: chunked, duplex: 'half' });
    expect(response.status).toBe(413);
    expect(outcomes[0]?.error?.code).toBe('payload_too_large');
  });

  it('a client that goes away mid-body is a bad_request, never a crash', async () => {
    const { port, outcomes, arrived } = await reader(1024);
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write('POST /mcp HTTP/1.1\r\nHost: gw\r\nContent-Length: 100\r\n\r\n{"jsonrpc"');
    await expect.poll(arrived).toBe(1);
    expect(outcomes).toEqual([]);
    socket.destroy();
    await expect.poll(() => outcomes[0]?.error?.code).toBe('bad_request');
  });

  it('reads no body of GET, HEAD and TRACE, nor of a request that declares none', async () => {
    const { port, outcomes } = await reader(1024);
    await fetch(`http://127.0.0.1:${port}/mcp`);
    await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'DELETE' });
    expect(outcomes).toEqual([{ reads: false }, { reads: false }]);
  });
});
