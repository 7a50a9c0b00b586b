import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';
import { createMemoryStore } from '../../src/cache/memory-store.js';
import { createRedisStore, type RedisStore } from '../../src/cache/redis-store.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { rawRequest } from '../helpers/raw-http.js';
import { spawnRedis, startRedis, uniquePrefix, type RedisHandle } from '../helpers/redis.js';
import { startTestUpstream, type TestUpstream, type UpstreamBehaviour } from '../helpers/upstream.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../helpers/redis-timeouts.js';

const PUBLIC = 'https://gw.example.test';
const RECORDED = `${PUBLIC}/recorded/mcp`;
const CALC = `${PUBLIC}/calc/mcp`;
const KEY_SECRET = 'k'.repeat(32);

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const ADD = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } });

let issuer: TestIssuer;
let recorded: TestUpstream;
let calculator: Calculator;

/** An upstream that opens a fresh session on initialize and answers everything else, recording what it gets. */
const sessionful: UpstreamBehaviour = (request, response) => {
  const isInitialize = request.body.includes('"initialize"');
  if (request.method === 'DELETE') {
    response.writeHead(200).end();
    return;
  }
  response.setHeader('content-type', 'application/json');
  if (isInitialize) response.setHeader('mcp-session-id', randomUUID());
  response.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { ok: true } }));
};

/** Replicas share the cache key secret, as they must with Redis; the store itself is handed to each gateway. */
function configYaml(): string {
  return `
public_url: ${PUBLIC}
cache: { key_secret: "${KEY_SECRET}" }
routes:
  - name: recorded
    path: /recorded/mcp
    upstream: { url: ${recorded.url} }
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
    sessions: { idle_ttl: 10m }
  - name: calc
    path: /calc/mcp
    upstream: { url: ${calculator.url} }
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
  - name: unbound
    path: /unbound/mcp
    upstream: { url: ${recorded.url} }
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
    sessions: { bind: false }
`;
}

function token(resource: string, sub: string, clientId = 'client-1'): Promise<string> {
  return issuer.mint({ aud: resource, sub, client_id: clientId, scope: 'mcp:tools' });
}

async function send(
  gw: RunningGateway,
  path: string,
  bearer: string,
  options: { method?: string; body?: string; session?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const method = options.method ?? 'POST';
  return fetch(`${gw.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      accept: 'application/json, text/event-stream',
      ...(method === 'POST' && { 'content-type': 'application/json' }),
      ...(options.session !== undefined && { 'mcp-session-id': options.session }),
      ...options.headers,
    },
    ...(method === 'POST' && { body: options.body ?? ADD }),
  });
}

async function openSession(gw: RunningGateway, path: string, bearer: string): Promise<string> {
  const response = await send(gw, path, bearer, { body: INITIALIZE });
  expect(response.status).toBe(200);
  await response.body?.cancel();
  const session = response.headers.get('mcp-session-id');
  if (!session) throw new Error('no session issued');
  return session;
}

beforeAll(async () => {
  issuer = await startTestIssuer();
  recorded = await startTestUpstream();
  calculator = await startCalculator();
});

afterAll(async () => {
  await Promise.all([issuer.close(), recorded.close(), calculator.close()]);
});

beforeEach(() => {
  recorded.requests.length = 0;
  recorded.respondWith(sessionful);
});

describe('session binding (in-process store)', () => {
  let gw: RunningGateway;
  let time = Date.now();

  beforeAll(async () => {
    gw = await startGateway(configYaml(), { cache: createMemoryStore({ now: () => time }) });
  });

  afterAll(async () => {
    await gw.close();
  });

  it('G1 user B with user A’s session id → 404 exactly like an unknown session; nothing reaches the upstream', async () => {
    const alice = await token(RECORDED, 'alice');
    const session = await openSession(gw, '/recorded/mcp', alice);
    recorded.requests.length = 0;

    const hijack = await send(gw, '/recorded/mcp', await token(RECORDED, 'bob'), { session });
    const unknown = await send(gw, '/recorded/mcp', await token(RECORDED, 'bob'), { session: randomUUID() });
    expect([hijack.status, unknown.status]).toEqual([404, 404]);
    expect(hijack.headers.get('www-authenticate')).toBeNull();
    const [hijackBody, unknownBody] = [await hijack.text(), await unknown.text()];
    expect(hijackBody).toBe(unknownBody);
    expect(JSON.parse(hijackBody)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Session not found' } });
    expect(recorded.requests).toHaveLength(0);

    expect((await send(gw, '/recorded/mcp', alice, { session })).status).toBe(200);
    expect(recorded.requests).toHaveLength(1);
  });

  it('G5 the same user through another client id is another principal → 404', async () => {
    const session = await openSession(gw, '/recorded/mcp', await token(RECORDED, 'alice', 'client-1'));
    const otherClient = await send(gw, '/recorded/mcp', await token(RECORDED, 'alice', 'client-2'), { session });
    expect(otherClient.status).toBe(404);
  });

  it('G8 SSE resume with Last-Event-ID on another user’s session → 404, no stream reaches the upstream', async () => {
    const session = await openSession(gw, '/recorded/mcp', await token(RECORDED, 'alice'));
    recorded.requests.length = 0;
    const resume = await send(gw, '/recorded/mcp', await token(RECORDED, 'bob'), {
      method: 'GET',
      session,
      headers: { accept: 'text/event-stream', 'last-event-id': 'stream-1_42' },
    });
    expect(resume.status).toBe(404);
    expect(recorded.requests).toHaveLength(0);
  });

  it('G4 a bound session id without a token is still 401 (sessions never authenticate)', async () => {
    const session = await openSession(gw, '/recorded/mcp', await token(RECORDED, 'alice'));
    const response = await fetch(`${gw.url}/recorded/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', 'mcp-session-id': session }, body: ADD });
    expect(response.status).toBe(401);
  });

  it.each<[string, string]>([
    ['a space', 'Mcp-Session-Id: abc def'],
    ['a control character', 'Mcp-Session-Id: abc\x01def'],
    ['a Latin-1 byte', 'Mcp-Session-Id: caf\xe9'],
    ['257 bytes', `Mcp-Session-Id: ${'s'.repeat(257)}`],
    ['two header lines', 'Mcp-Session-Id: abc\r\nMcp-Session-Id: def'],
  ])('G2 a session id with %s → 400, upstream not called, never logged raw', async (_title, line) => {
    const bearer = await token(RECORDED, 'alice');
    const response = await rawRequest(
      gw.port,
      ['POST /recorded/mcp HTTP/1.1', 'Host: x', 'Content-Type: application/json', `Authorization: Bearer ${bearer}`, line],
      ADD,
    );
    expect(response.status).toBe(400);
    expect(recorded.requests).toHaveLength(0);
    expect(gw.logs.join('\n')).not.toContain('s'.repeat(257));
  });

  it('DELETE ends the binding once the upstream confirms; a refused DELETE keeps it', async () => {
    const alice = await token(RECORDED, 'alice');
    const session = await openSession(gw, '/recorded/mcp', alice);
    recorded.respondWith((_request, response) => void response.writeHead(405).end());
    expect((await send(gw, '/recorded/mcp', alice, { method: 'DELETE', session })).status).toBe(405);
    recorded.respondWith(sessionful);
    expect((await send(gw, '/recorded/mcp', alice, { session })).status).toBe(200);

    expect((await send(gw, '/recorded/mcp', alice, { method: 'DELETE', session })).status).toBe(200);
    recorded.requests.length = 0;
    expect((await send(gw, '/recorded/mcp', alice, { session })).status).toBe(404);
    expect(recorded.requests).toHaveLength(0);
  });

  it('a binding unused for idle_ttl expires (each use restarts it)', async () => {
    const alice = await token(RECORDED, 'alice');
    const session = await openSession(gw, '/recorded/mcp', alice);
    time += 9 * 60_000;
    expect((await send(gw, '/recorded/mcp', alice, { session })).status).toBe(200);
    time += 9 * 60_000;
    expect((await send(gw, '/recorded/mcp', alice, { session })).status).toBe(200);
    time += 10 * 60_000 + 1;
    expect((await send(gw, '/recorded/mcp', alice, { session })).status).toBe(404);
  });

  it('only an initialize response binds: a session id the upstream sends on other answers is not claimed', async () => {
    const alice = await token(RECORDED, 'alice');
    const planted = randomUUID();
    recorded.respondWith((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.setHeader('mcp-session-id', planted);
      response.end('{"jsonrpc":"2.0","id":2,"result":{}}');
    });
    expect((await send(gw, '/recorded/mcp', alice)).status).toBe(200);
    expect((await send(gw, '/recorded/mcp', alice, { session: planted })).status).toBe(404);
  });

  it('with sessions.bind: false, session ids are forwarded unchecked (but still validated)', async () => {
    const bearer = await token(`${PUBLIC}/unbound/mcp`, 'bob');
    expect((await send(gw, '/unbound/mcp', bearer, { session: 'anything-goes' })).status).toBe(200);
    expect(recorded.requests[0]?.headers['mcp-session-id']).toBe('anything-goes');
    expect((await send(gw, '/unbound/mcp', bearer, { session: 'not valid' })).status).toBe(400);
  });

  it('G3 two principals with identical JSON-RPC ids and open SSE streams each get only their own answers (real SDK both sides)', async () => {
    const connect = async (sub: string, clientId: string) => {
      const bearer = await token(CALC, sub, clientId);
      const client = new Client({ name: `g3-${sub}`, version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/calc/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      });
      await client.connect(transport);
      return { client, transport };
    };
    const alice = await connect('alice', 'client-1');
    const bob = await connect('bob', 'client-2');
    try {
      expect(alice.transport.sessionId).not.toBe(bob.transport.sessionId);
      // Both SDK clients number their requests the same way, so every pair below shares a JSON-RPC id.
      const rounds = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const [a, b] = await Promise.all([
            alice.client.callTool({ name: 'add', arguments: { a: i, b: 1000 } }),
            bob.client.callTool({ name: 'multiply', arguments: { x: i, y: -1 } }),
          ]);
          return [a, b];
        }),
      );
      rounds.forEach(([a, b], i) => {
        expect(a?.content).toEqual([{ type: 'text', text: String(i + 1000) }]);
        expect(b?.content).toEqual([{ type: 'text', text: String(i === 0 ? 0 : -i) }]);
      });

      // And bob cannot ride alice's session even with the SDK's own machinery.
      const hijacker = new StreamableHTTPClientTransport(new URL(`${gw.url}/calc/mcp`), {
        sessionId: alice.transport.sessionId,
        requestInit: { headers: { authorization: `Bearer ${await token(CALC, 'bob', 'client-2')}` } },
      });
      const hijack = new Client({ name: 'hijack', version: '1.0.0' });
      // With a session id set, the SDK resumes the session instead of initializing.
      await hijack.connect(hijacker);
      await expect(hijack.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).rejects.toThrow(/404|Session not found/);
      await hijack.close();

      const aliceSession = alice.transport.sessionId ?? '';
      await alice.transport.terminateSession();
      const afterDelete = await send(gw, '/calc/mcp', await token(CALC, 'alice', 'client-1'), { session: aliceSession });
      expect(afterDelete.status).toBe(404);
    } finally {
      await Promise.all([alice.client.close(), bob.client.close()]);
    }
  });
});

describe('session binding across replicas (real Redis)', () => {
  let redis: RedisHandle;
  const gateways: RunningGateway[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.close()));
    await redis.stop();
  });

  async function replica(url: string, keyPrefix: string): Promise<RunningGateway> {
    const cache: RedisStore = createRedisStore({ url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
    expect(await cache.whenReady(10_000)).toBe(true);
    const gw = await startGateway(configYaml(), { cache });
    gateways.push(gw);
    return gw;
  }

  it('G1 a session opened on one replica is refused to another user on the other replica, served to its owner', async () => {
    const keyPrefix = uniquePrefix('sessions');
    const [first, second] = [await replica(redis.url, keyPrefix), await replica(redis.url, keyPrefix)];
    const alice = await token(RECORDED, 'alice');
    const session = await openSession(first, '/recorded/mcp', alice);
    expect((await send(second, '/recorded/mcp', await token(RECORDED, 'bob'), { session })).status).toBe(404);
    expect((await send(second, '/recorded/mcp', alice, { session })).status).toBe(200);
    expect((await send(second, '/recorded/mcp', alice, { method: 'DELETE', session })).status).toBe(200);
    expect((await send(first, '/recorded/mcp', alice, { session })).status).toBe(404);
  });

  it('Redis down: a session this replica saw is served to its owner only; one it never saw gets 503 + Retry-After; new sessions still open', async () => {
    const spawned = await spawnRedis();
    try {
      const keyPrefix = uniquePrefix('sessions-down');
      const [gw, other] = [await replica(spawned.url, keyPrefix), await replica(spawned.url, keyPrefix)];
      const alice = await token(RECORDED, 'alice');
      const session = await openSession(gw, '/recorded/mcp', alice);
      const elsewhere = await openSession(other, '/recorded/mcp', alice);
      await spawned.kill();
      recorded.requests.length = 0;
      expect((await send(gw, '/recorded/mcp', await token(RECORDED, 'bob'), { session })).status).toBe(404);
      expect(recorded.requests).toHaveLength(0);
      expect((await send(gw, '/recorded/mcp', alice, { session })).status).toBe(200);
      expect(recorded.requests).toHaveLength(1);
      for (const who of ['alice', 'bob']) {
        const response = await send(gw, '/recorded/mcp', await token(RECORDED, who), { session: elsewhere });
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      expect(recorded.requests).toHaveLength(1);
      const fresh = await send(gw, '/recorded/mcp', alice, { body: INITIALIZE });
      expect(fresh.status).toBe(200);
    } finally {
      await spawned.stop();
    }
  });
});
