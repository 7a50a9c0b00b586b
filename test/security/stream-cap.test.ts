import type { ServerResponse } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';
import { bodyReader, openEventStream } from '../helpers/sse.js';

/**
 * K14: one principal cannot hold more than limits.max_streams_per_principal standalone SSE streams, nor more than
 * limits.max_concurrent_requests_per_principal requests in flight: a user (issuer and subject) through every
 * client, a client without a subject on its own. Tool calls (POSTs that accept an SSE answer, as every spec client
 * sends them) count as requests, not streams.
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
    // Tool calls are not streams: a user at the stream cap still calls tools.
    expect((await post('alice', 'application/json, text/event-stream')).status).toBe(200);
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

describe('the stream cap caps streams, not tool calls', () => {
  const CONCURRENT_CALLS = 20;
  const capped = setupJwtStack((target) => `
public_url: ${PUBLIC}
limits: { max_streams_per_principal: 4, max_concurrent_requests_per_principal: 24 }
routes:
${jwtRoute('calc', target)}
    sessions: { bind: false }
`);

  it(`${CONCURRENT_CALLS} concurrent tool calls of one user (Accept: JSON and SSE) under a stream cap of 4 all succeed`, async () => {
    // The upstream holds every call until each of them has either arrived or been answered by the gateway, so all
    // are in flight at once; then it answers each as an SSE stream (what SDK servers do).
    const held: ServerResponse[] = [];
    let answeredEarly = 0;
    let releaseAll!: () => void;
    const allInFlight = new Promise<void>((resolve) => (releaseAll = resolve));
    const settle = () => {
      if (held.length + answeredEarly === CONCURRENT_CALLS) releaseAll();
    };
    capped.upstream.respondWith((_request, response) => {
      held.push(response);
      settle();
    });
    const token = await capped.issuer.mint({ aud: MCP, sub: 'tool-user' });
    const calls = Array.from({ length: CONCURRENT_CALLS }, async (_unused, index) => {
      const response = await fetch(`${capped.gw.url}/calc/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: index, method: 'tools/call', params: { name: 'add' } }),
      });
      if (held.length + answeredEarly < CONCURRENT_CALLS) {
        answeredEarly += 1;
        settle();
      }
      return { status: response.status, text: await response.text() };
    });
    await allInFlight;
    for (const response of held) {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    }
    const results = await Promise.all(calls);
    expect(results.map((result) => result.status)).toEqual(Array.from({ length: CONCURRENT_CALLS }, () => 200));
    expect(held).toHaveLength(CONCURRENT_CALLS);
  });

  it('requests in flight have a cap of their own: one past max_concurrent_requests_per_principal → 429 before the upstream', async () => {
    const held: ServerResponse[] = [];
    let allHeld!: () => void;
    const limitReached = new Promise<void>((resolve) => (allHeld = resolve));
    capped.upstream.respondWith((_request, response) => {
      held.push(response);
      if (held.length === 24) allHeld();
    });
    const token = await capped.issuer.mint({ aud: MCP, sub: 'busy-user' });
    const send = (id: number) =>
      fetch(`${capped.gw.url}/calc/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'add' } }),
      });
    const inFlight = Array.from({ length: 24 }, (_unused, index) => send(index));
    await limitReached;
    const refused = await send(99);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(held).toHaveLength(24);
    // Another user is not affected.
    const other = fetch(`${capped.gw.url}/calc/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await capped.issuer.mint({ aud: MCP, sub: 'other-user' })}`, 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    await new Promise<void>((resolve) => {
      const poll = () => (held.length === 25 ? resolve() : setImmediate(poll));
      poll();
    });
    for (const response of held) response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect((await Promise.all(inFlight)).every((response) => response.status === 200)).toBe(true);
    expect((await other).status).toBe(200);
    // Once they ended, the slots are free again.
    capped.upstream.respondWith((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}'));
    expect((await send(100)).status).toBe(200);
  });
});
