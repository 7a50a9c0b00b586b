import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamCall } from '../../../../src/doors/proxy/upstream-call.js';
import { listen } from '../../../helpers/net.js';

/** UpstreamCall against a real HTTP server on port 0 through a real undici Agent: whole, streamed, aborted. */

type Handler = (request: IncomingMessage, response: ServerResponse) => void;
let handler: Handler = (_request, response) => response.end();
let server: Server;
let origin: string;
let agent: Agent;
/** Resolves when the server saw a request's connection close (the gateway cut the exchange). */
let requestClosed: Promise<void>;

beforeAll(async () => {
  server = createServer((request, response) => {
    requestClosed = new Promise((resolve) => response.once('close', () => resolve()));
    handler(request, response);
  });
  origin = `http://127.0.0.1:${await listen(server)}`;
});
afterEach(async () => {
  await agent.destroy();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function call(holdWhole: boolean, path = '/mcp'): UpstreamCall {
  agent = new Agent({ bodyTimeout: 0 });
  return new UpstreamCall(agent, { origin, path, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, () => holdWhole);
}

async function readAll(body: Readable): Promise<string> {
  let text = '';
  for await (const chunk of body) text += String(chunk);
  return text;
}

describe('UpstreamCall', () => {
  it('collects an answer held whole into one Buffer, with status, headers and the time headers arrived', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      response.write('{"jsonrpc":"2.0",');
      response.end('"id":1,"result":{}}');
    };
    const upstream = call(true);
    const answer = await upstream.answer;
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['x-upstream']).toBe('yes');
    expect(Buffer.isBuffer(answer.body)).toBe(true);
    expect((answer.body as Buffer).toString()).toBe('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect(upstream.respondedAt).toBeTypeOf('number');
  });

  it('streams any other answer, with backpressure: the upstream waits while nobody reads', async () => {
    const chunk = 'x'.repeat(64 * 1024);
    let written = 0;
    let blocked: () => void = () => undefined;
    const upstreamBlocked = new Promise<void>((resolve) => (blocked = resolve));
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const pump = (): void => {
        while (written < 64) {
          written += 1;
          if (!response.write(chunk)) {
            blocked();
            response.once('drain', pump);
            return;
          }
        }
        response.end();
      };
      pump();
    };
    const answer = await call(false).answer;
    expect(answer.body).toBeInstanceOf(Readable);
    await upstreamBlocked;
    expect(written).toBeLessThan(64);
    const text = await readAll(answer.body as Readable);
    expect(text.length).toBe(64 * chunk.length);
  });

  it('abort before the answer: the promise rejects and the upstream connection is closed', async () => {
    handler = () => undefined;
    const upstream = call(true);
    const rejected = expect(upstream.answer).rejects.toThrow(/aborted/);
    await new Promise((resolve) => server.once('request', resolve));
    upstream.abort();
    await rejected;
    await requestClosed;
    expect(upstream.respondedAt).toBeUndefined();
  });

  it('abort while the request waits in the pool: it never reaches the upstream', async () => {
    let requests = 0;
    handler = () => {
      requests += 1;
    };
    agent = new Agent({ connections: 1, bodyTimeout: 0 });
    const first = new UpstreamCall(agent, { origin, path: '/first', method: 'GET' }, () => true);
    await new Promise((resolve) => server.once('request', resolve));
    const queued = new UpstreamCall(agent, { origin, path: '/queued', method: 'GET' }, () => true);
    const rejected = Promise.all([expect(queued.answer).rejects.toThrow(/aborted/), expect(first.answer).rejects.toThrow(/aborted/)]);
    queued.abort();
    first.abort();
    await rejected;
    expect(requests).toBe(1);
  });

  it('abort mid-stream: the body errors and the upstream connection is closed', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: 1\n\n');
    };
    const upstream = call(false);
    const { body } = await upstream.answer;
    const errored = once(body as Readable, 'error');
    upstream.abort();
    await errored;
    await requestClosed;
  });

  it('destroying a streamed body before its end cuts the exchange', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: 1\n\n');
    };
    const { body } = await call(false).answer;
    (body as Readable).on('error', () => undefined).destroy();
    await requestClosed;
  });

  it('an answer held whole that breaks off after its headers rejects, with the headers time recorded', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"partial"');
      setImmediate(() => response.destroy());
    };
    const upstream = call(true);
    await expect(upstream.answer).rejects.toThrow();
    expect(upstream.statusCode).toBe(200);
    expect(upstream.respondedAt).toBeTypeOf('number');
  });

  it('a refused connection rejects before any answer', async () => {
    agent = new Agent();
    const upstream = new UpstreamCall(agent, { origin: 'http://127.0.0.1:1', path: '/', method: 'GET' }, () => true);
    await expect(upstream.answer).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(upstream.respondedAt).toBeUndefined();
  });
});
