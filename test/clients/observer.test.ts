import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observeHttp, type HttpObserver } from './observer.js';

let server: ReturnType<typeof createServer>;
let port: number;
let observer: HttpObserver;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url?.startsWith('/stream')) {
      // Headers given to writeHead only (as fastify writes them), an answer still open.
      response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Mcp-Session-Id': 'abc' });
      response.write('data: {}\n\n');
      setImmediate(() => response.end());
      return;
    }
    response.setHeader('content-type', 'application/json');
    response.statusCode = 201;
    response.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  observer = observeHttp({ gateway: port, authorizationServer: -1 });
});

afterAll(async () => {
  observer.close();
  await new Promise((resolve) => server.close(resolve));
});

describe('observeHttp', () => {
  it('records status and headers however they were written, and keeps no code from a query', async () => {
    await (await fetch(`http://127.0.0.1:${port}/stream`, { headers: { 'mcp-session-id': 'abc' } })).text();
    await (await fetch(`http://127.0.0.1:${port}/auth?client_id=c&code=secret-code&scope=a%20b`)).text();
    expect(observer.exchanges()).toEqual([
      {
        server: 'gateway',
        method: 'GET',
        path: '/stream',
        query: {},
        status: 200,
        contentType: 'text/event-stream',
        sentSessionId: true,
        issuedSessionId: true,
      },
      {
        server: 'gateway',
        method: 'GET',
        path: '/auth',
        query: { client_id: 'c', scope: 'a b' },
        status: 201,
        contentType: 'application/json',
        sentSessionId: false,
        issuedSessionId: false,
      },
    ]);
    expect(JSON.stringify(observer.exchanges())).not.toContain('secret-code');
  });
});
