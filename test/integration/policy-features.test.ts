import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';
import { createRedisStore } from '../../src/cache/redis-store.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { deferred } from '../helpers/introspection-server.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { spawnRedis, startRedis, uniquePrefix } from '../helpers/redis.js';
import { jsonRpcEcho, startTestUpstream, type TestUpstream } from '../helpers/upstream.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../helpers/redis-timeouts.js';

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;
const LISTS = `${PUBLIC}/lists/mcp`;
const LIMITED = `${PUBLIC}/limited/mcp`;
const CALC_PRM = `${PUBLIC}/.well-known/oauth-protected-resource/calc/mcp`;

let issuer: TestIssuer;
let calculator: Calculator;
let upstream: TestUpstream;
let gw: RunningGateway;

function configYaml(): string {
  const common = `authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }`;
  return `
public_url: ${PUBLIC}
cache: { key_secret: "${'k'.repeat(32)}" }
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: ${calculator.url} }
    ${common}
    scopes_supported: [mcp:tools, calc:write, calc:admin]
    policy:
      scopes: [mcp:tools]
      tools: { multiply: [calc:write] }
      implies: { "calc:admin": [calc:write] }
      hide_unauthorized: true
  - name: lists
    path: /lists/mcp
    upstream: { url: ${upstream.url} }
    ${common}
    sessions: { bind: false }
    policy:
      tools: { secret-tool: [admin] }
      resources: { "file:///secret": [admin] }
      prompts: { secret-prompt: [admin] }
      hide_unauthorized: true
  - name: limited
    path: /limited/mcp
    upstream: { url: ${upstream.url} }
    ${common}
    rate_limit: { requests: 2, per: 1h }
`;
}

const message = (method: string, params: Record<string, unknown> = {}, id: number | string = 5) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

function post(target: RunningGateway, path: string, bearer: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

const tokenFor = (aud: string, scope: string, sub = 'alice') => issuer.mint({ aud, scope, sub });

beforeAll(async () => {
  issuer = await startTestIssuer();
  calculator = await startCalculator();
  upstream = await startTestUpstream();
  gw = await startGateway(configYaml());
});

afterAll(async () => {
  await gw.close();
  await Promise.all([issuer.close(), calculator.close(), upstream.close()]);
});

beforeEach(() => {
  upstream.requests.length = 0;
  upstream.respondWith(jsonRpcEcho);
});

describe('policy.hide_unauthorized', () => {
  async function sdkClient(scope: string): Promise<Client> {
    const client = new Client({ name: 'lists', version: '1.0.0' });
    const bearer = await tokenFor(CALC, scope);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/calc/mcp`), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } }));
    return client;
  }

  it.each<[string, string, string[]]>([
    ['the route scope only: multiply is hidden', 'mcp:tools', ['add']],
    ['calc:write: both', 'mcp:tools calc:write', ['add', 'multiply']],
    ['calc:admin implies calc:write: both', 'mcp:tools calc:admin', ['add', 'multiply']],
  ])('real SDK client and server (SSE answers): %s', async (_title, scope, visible) => {
    const client = await sdkClient(scope);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(visible);
    } finally {
      await client.close();
    }
  });

  it('implies is honoured by the tools/call check; a 403 still names the scopes the operation needs', async () => {
    const admin = await sdkClient('mcp:tools calc:admin');
    try {
      expect((await admin.callTool({ name: 'multiply', arguments: { x: 6, y: 7 } })).content).toEqual([{ type: 'text', text: '42' }]);
    } finally {
      await admin.close();
    }
    const refused = await post(gw, '/calc/mcp', await tokenFor(CALC, 'mcp:tools'), message('tools/call', { name: 'multiply', arguments: { x: 1, y: 1 } }));
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", error_description="The access token lacks a required scope", resource_metadata="${CALC_PRM}", scope="mcp:tools calc:write"`,
    );
  });

  it.each<[string, string, Record<string, unknown>, Record<string, unknown>]>([
    ['tools/list', 'tools', { tools: [{ name: 'add' }, { name: 'secret-tool' }], nextCursor: 'n' }, { tools: [{ name: 'add' }], nextCursor: 'n', cacheScope: 'private' }],
    ['resources/list', 'resources', { resources: [{ uri: 'file:///secret' }, { uri: 'file:///public' }] }, { resources: [{ uri: 'file:///public' }], cacheScope: 'private' }],
    ['prompts/list', 'prompts', { prompts: [{ name: 'secret-prompt' }, { name: 'hello' }] }, { prompts: [{ name: 'hello' }], cacheScope: 'private' }],
  ])('JSON answer to %s: filtered, Content-Length fixed, asked uncompressed', async (method, _field, result, expected) => {
    upstream.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: 5, result }));
    });
    const response = await post(gw, '/lists/mcp', await tokenFor(LISTS, 'mcp:tools'), message(method), { 'accept-encoding': 'gzip, br' });
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', id: 5, result: expected });
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(upstream.requests[0]?.headers['accept-encoding']).toBeUndefined();
  });

  it('the same list with the scope shown in full; other methods pass byte for byte', async () => {
    const body = '{"jsonrpc":"2.0", "id":5, "result":{"tools":[{"name":"secret-tool"}]}}';
    upstream.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
    const full = await post(gw, '/lists/mcp', await tokenFor(LISTS, 'admin'), message('tools/list'));
    expect(await full.json()).toEqual({ jsonrpc: '2.0', id: 5, result: { tools: [{ name: 'secret-tool' }], cacheScope: 'private' } });
    const other = await post(gw, '/lists/mcp', await tokenFor(LISTS, 'mcp:tools'), message('tools/call', { name: 'add' }));
    expect(await other.text()).toBe(body);
  });

  it('SSE answer: only the list response is rewritten, and events before it are not held back', async () => {
    const release = deferred();
    upstream.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n');
      void release.promise.then(() => {
        response.end('id: 7\ndata: {"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"secret-tool"},{"name":"add"}]}}\n\n');
      });
    });
    const response = await post(gw, '/lists/mcp', await tokenFor(LISTS, 'mcp:tools'), message('tools/list'));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('\n\n')) received += decoder.decode((await reader.read()).value);
    expect(received).toContain('notifications/progress');
    release.release();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) received += decoder.decode(chunk.value);
    expect(received).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n' +
        'id: 7\ndata: {"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"add"}],"cacheScope":"private"}}\n\n',
    );
  });

  it('a list response replayed on a GET stream (Last-Event-ID resumption) is filtered too', async () => {
    upstream.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('id: 9\ndata: {"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"secret-tool"},{"name":"add"}]}}\n\n');
    });
    const response = await fetch(`${gw.url}/lists/mcp`, {
      headers: { authorization: `Bearer ${await tokenFor(LISTS, 'mcp:tools')}`, accept: 'text/event-stream', 'last-event-id': '8' },
    });
    expect(await response.text()).toBe('id: 9\ndata: {"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"add"}],"cacheScope":"private"}}\n\n');
    expect(upstream.requests[0]?.headers['last-event-id']).toBe('8');
  });

  it.each<[string, Record<string, string>, string]>([
    ['a non-JSON answer', { 'content-type': 'text/plain' }, 'secret-tool'],
    ['a compressed answer', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, 'secret-tool'],
    ['broken JSON', { 'content-type': 'application/json' }, '{"tools":["secret-tool"'],
  ])('%s to a list it must filter → 502, never passed on unfiltered', async (_title, headers, body) => {
    upstream.respondWith((_request, response) => {
      response.writeHead(200, headers);
      response.end(body);
    });
    const response = await post(gw, '/lists/mcp', await tokenFor(LISTS, 'mcp:tools'), message('tools/list'));
    expect(response.status).toBe(502);
    expect(await response.text()).not.toContain('secret-tool');
  });
});

describe('MCP 2026-07-28 Mcp-Method / Mcp-Name headers', () => {
  const add = message('tools/call', { name: 'add', arguments: { a: 1, b: 2 } });
  const multiply = message('tools/call', { name: 'multiply', arguments: { x: 1, y: 2 } });

  it.each<[string, string, Record<string, string>]>([
    ['method differs', add, { 'mcp-method': 'tools/list' }],
    ['name differs: routed as add, would run multiply', multiply, { 'mcp-method': 'tools/call', 'mcp-name': 'add' }],
    ['an Mcp-Param value that does not decode', add, { 'mcp-method': 'tools/call', 'mcp-name': 'add', 'mcp-param-region': '=?base64?!!?=' }],
  ])('%s → 400 with JSON-RPC -32020; nothing forwarded', async (_title, body, headers) => {
    const response = await post(gw, '/lists/mcp', await tokenFor(LISTS, 'admin'), body, headers);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32020, message: 'Mcp-Method, Mcp-Name, Mcp-Param-* or MCP-Protocol-Version header missing, invalid or not matching the request body' },
    });
    expect(upstream.requests).toHaveLength(0);
  });

  it('matching headers (plain and base64-encoded) are forwarded; the body decides the scopes', async () => {
    const bearer = await tokenFor(LISTS, 'mcp:tools');
    expect((await post(gw, '/lists/mcp', bearer, add, { 'mcp-method': 'tools/call', 'mcp-name': 'add' })).status).toBe(200);
    const encoded = `=?base64?${Buffer.from('add').toString('base64')}?=`;
    expect((await post(gw, '/lists/mcp', bearer, add, { 'mcp-method': 'tools/call', 'mcp-name': encoded })).status).toBe(200);
    expect(upstream.requests[1]?.headers['mcp-name']).toBe(encoded);
    const secret = message('tools/call', { name: 'secret-tool' });
    expect((await post(gw, '/lists/mcp', bearer, secret, { 'mcp-method': 'tools/call', 'mcp-name': 'secret-tool' })).status).toBe(403);
  });
});

describe('rate_limit', () => {
  it('per principal: over the limit → 429 with Retry-After and a JSON-RPC -32603 error with data.retryAfterMs; others unaffected', async () => {
    const alice = await tokenFor(LIMITED, 'mcp:tools', 'alice');
    for (let i = 0; i < 2; i++) expect((await post(gw, '/limited/mcp', alice, message('ping'))).status).toBe(200);
    const limited = await post(gw, '/limited/mcp', alice, message('ping'));
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(1_700);
    expect(retryAfter).toBeLessThanOrEqual(1_800);
    const body = (await limited.json()) as { error: { code: number; data: { retryAfterMs: number } } };
    expect(body.error.code).toBe(-32603);
    expect(Math.ceil(body.error.data.retryAfterMs / 1000)).toBe(retryAfter);
    expect(upstream.requests).toHaveLength(2);
    expect((await post(gw, '/limited/mcp', await tokenFor(LIMITED, 'mcp:tools', 'bob'), message('ping'))).status).toBe(200);
  });

  it('shared by replicas through Redis; fails open when Redis is down', async () => {
    const redis = await startRedis();
    const spawned = await spawnRedis();
    const replicas: RunningGateway[] = [];
    try {
      const keyPrefix = uniquePrefix('rate-limit');
      for (const url of [redis.url, redis.url, spawned.url]) {
        const cache = createRedisStore({ url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
        expect(await cache.whenReady(10_000)).toBe(true);
        replicas.push(await startGateway(configYaml(), { cache }));
      }
      const [first, second, down] = replicas as [RunningGateway, RunningGateway, RunningGateway];
      const carol = await tokenFor(LIMITED, 'mcp:tools', 'carol');
      const statuses = [];
      for (const replica of [first, second, first]) statuses.push((await post(replica, '/limited/mcp', carol, message('ping'))).status);
      expect(statuses).toEqual([200, 200, 429]);

      await spawned.kill();
      for (let i = 0; i < 4; i++) expect((await post(down, '/limited/mcp', carol, message('ping'))).status).toBe(200);
    } finally {
      await Promise.all(replicas.map((replica) => replica.close()));
      await Promise.all([redis.stop(), spawned.stop()]);
    }
  });
});
