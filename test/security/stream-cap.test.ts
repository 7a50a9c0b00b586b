import type { ServerResponse } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';
import { bodyReader, openEventStream } from '../helpers/sse.js';

/**
 * K14: one principal cannot hold more than limits.max_streams_per_principal SSE streams: a user (issuer and
 * subject) through every client, a client without a subject on its own.
 */

const PUBLIC = 'https://gw.example.test';
const MCP = `${PUBLIC}/calc/mcp`;
/** Upstream responses by the id the test gave them, closed when the gateway drops the exchange. */
const upstreamClosed = new Map<string, Promise<void>>();

const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
limits: { max_streams_per_principal: 2 }
routes:
${jwtRoute('calc', target)}
    sessions: { bind: false }
`);

beforeAll(() => {
  stack.upstream.respondWith((request, response: ServerResponse) => {
    const id = String(request.headers['x-request-id']);
    upstreamClosed.set(id, new Promise((resolve) => response.once('close', () => resolve())));
    if (request.method === 'GET') openEventStream(response, '{"open":true}');
    else response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
  });
});

interface OpenStream {
  readonly response: Response;
  close(): Promise<void>;
}

/** Who a token names: `sub` and `client_id` claims; `undefined` leaves a claim out. */
type Caller = string | { readonly sub?: string; readonly client_id?: string };

const tokenFor = (caller: Caller): Promise<string> =>
  stack.issuer.mint({ aud: MCP, ...(typeof caller === 'string' ? { sub: caller } : { sub: undefined, ...caller }) });

async function openStream(caller: Caller, id: string): Promise<OpenStream> {
  const abort = new AbortController();
  const response = await fetch(`${stack.gw.url}/calc/mcp`, {
    headers: { authorization: `Bearer ${await tokenFor(caller)}`, accept: 'text/event-stream', 'x-request-id': id },
    signal: abort.signal,
  });
  if (response.status === 200) await bodyReader(response).until('"open":true');
  return {
    response,
    async close() {
      abort.abort();
      await upstreamClosed.get(id);
    },
  };
}

const post = async (sub: string, accept: string) =>
  fetch(`${stack.gw.url}/calc/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await tokenFor(sub)}`, 'content-type': 'application/json', accept },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });

describe('K14 stream cap per principal', () => {
  it('K14 a third stream of one principal → 429 + Retry-After; another principal is unaffected; a closed stream frees a slot', async () => {
    const first = await openStream('alice', 'alice-1');
    const second = await openStream('alice', 'alice-2');
    expect([first.response.status, second.response.status]).toEqual([200, 200]);

    const third = await openStream('alice', 'alice-3');
    expect(third.response.status).toBe(429);
    expect(third.response.headers.get('retry-after')).toBe('5');
    expect(stack.upstream.requests.some((request) => request.headers['x-request-id'] === 'alice-3')).toBe(false);
    // A POST that accepts an SSE answer may become a stream: it needs a slot too, before anything runs upstream.
    expect((await post('alice', 'application/json, text/event-stream')).status).toBe(429);
    expect((await post('alice', 'application/json')).status).toBe(200);

    const bob = await openStream('bob', 'bob-1');
    expect(bob.response.status).toBe(200);

    await first.close();
    const again = await openStream('alice', 'alice-4');
    expect(again.response.status).toBe(200);
    await Promise.all([second.close(), bob.close(), again.close()]);
  });

  it('K14 one user through several (dynamically registered) clients holds one cap, not one per client', async () => {
    const first = await openStream({ sub: 'dave', client_id: 'registered-1' }, 'dave-1');
    const second = await openStream({ sub: 'dave', client_id: 'registered-2' }, 'dave-2');
    expect([first.response.status, second.response.status]).toEqual([200, 200]);
    const third = await openStream({ sub: 'dave', client_id: 'registered-3' }, 'dave-3');
    expect(third.response.status).toBe(429);
    expect(stack.upstream.requests.some((request) => request.headers['x-request-id'] === 'dave-3')).toBe(false);
    await Promise.all([first.close(), second.close()]);
  });

  it('K14 clients without a subject each hold their own cap', async () => {
    const streams = await Promise.all([
      openStream({ client_id: 'bot-a' }, 'bot-a-1'),
      openStream({ client_id: 'bot-a' }, 'bot-a-2'),
      openStream({ client_id: 'bot-b' }, 'bot-b-1'),
    ]);
    expect(streams.map((stream) => stream.response.status)).toEqual([200, 200, 200]);
    expect((await openStream({ client_id: 'bot-a' }, 'bot-a-3')).response.status).toBe(429);
    await Promise.all(streams.map((stream) => stream.close()));
  });

  it('K14 a POST answered with JSON gives its slot back at once', async () => {
    for (let call = 0; call < 5; call += 1) expect((await post('carol', 'application/json, text/event-stream')).status).toBe(200);
  });
});
