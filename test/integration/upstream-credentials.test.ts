import { createRemoteJWKSet, exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { basicCredentials } from '../../src/auth/introspection-client.js';
import { createRedisStore } from '../../src/cache/redis-store.js';
import type { CacheStore } from '../../src/cache/store.js';
import { IDENTITY_ASSERTION_TYP } from '../../src/identity/assertion.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { json, startIntrospectionServer, type TestIntrospectionServer } from '../helpers/introspection-server.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { startRedis, uniquePrefix, type RedisHandle } from '../helpers/redis.js';
import { jsonRpcEcho, startTestUpstream, type TestUpstream } from '../helpers/upstream.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../helpers/redis-timeouts.js';

const PUBLIC = 'https://gw.example.test';
const CC = `${PUBLIC}/cc/mcp`;
const TX = `${PUBLIC}/tx/mcp`;
const SECRET_V1 = 'client-secret-canary-v1-8a0b';
const SECRET_V2 = 'client-secret-canary-v2-3f6e';
const UPSTREAM_TOKEN = 'upstream-token-canary-c4d2';
const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

let issuer: TestIssuer;
let tokenEndpoint: TestIntrospectionServer;
let upstream: TestUpstream;
let signingKeyPem: string;
let issued = 0;
const running: RunningGateway[] = [];

function configYaml(options: { identity?: boolean } = {}): string {
  const identity = options.identity === false ? '' : '\n      identity: { header: X-Gateway-Identity, ttl: 30s }';
  return `
public_url: ${PUBLIC}
cache: { key_secret: "${'k'.repeat(32)}" }
signing_key: "\${env:SIGNING_KEY}"
routes:
  - name: cc
    path: /cc/mcp
    upstream:
      url: ${upstream.url}
      auth:
        type: client_credentials
        token_endpoint: ${tokenEndpoint.endpoint.origin}/token
        client_id: gateway
        client_secret: "\${env:CLIENT_SECRET}"
        scope: [calc:read]
        resource: ${upstream.url}${identity}
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
  - name: tx
    path: /tx/mcp
    upstream:
      url: ${upstream.url}
      auth:
        type: token_exchange
        token_endpoint: ${tokenEndpoint.endpoint.origin}/token
        client_id: gateway
        client_secret: "\${env:CLIENT_SECRET}"
        audience: calc-api
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
`;
}

async function gateway(options: { secret?: string; identity?: boolean; cache?: CacheStore } = {}) {
  const gw = await startGateway(configYaml(options), {
    env: { CLIENT_SECRET: options.secret ?? SECRET_V1, SIGNING_KEY: signingKeyPem },
    ...(options.cache && { cache: options.cache }),
  });
  running.push(gw);
  return gw;
}

function post(gw: RunningGateway, path: string, bearer: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: TOOLS_LIST,
  });
}

const callerToken = (resource: string, sub = 'alice') => issuer.mint({ aud: resource, sub, scope: 'mcp:tools' });

beforeAll(async () => {
  issuer = await startTestIssuer();
  tokenEndpoint = await startIntrospectionServer();
  upstream = await startTestUpstream();
  signingKeyPem = await exportPKCS8((await generateKeyPair('ES256', { extractable: true })).privateKey);
});

afterAll(async () => {
  await Promise.all([issuer.close(), tokenEndpoint.close(), upstream.close()]);
});

beforeEach(() => {
  issued = 0;
  tokenEndpoint.calls.length = 0;
  tokenEndpoint.respond(() => json({ access_token: `${UPSTREAM_TOKEN}-${(issued += 1)}`, token_type: 'Bearer', expires_in: 300 }));
  upstream.requests.length = 0;
  upstream.respondWith(jsonRpcEcho);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((gw) => gw.close()));
});

describe('client_credentials upstream auth', () => {
  it('F1 the upstream gets the token from the token endpoint, never the caller token; one token serves many requests', async () => {
    const gw = await gateway();
    const bearer = await callerToken(CC);
    for (let i = 0; i < 3; i++) expect((await post(gw, '/cc/mcp', bearer)).status).toBe(200);
    expect(upstream.requests.map((request) => request.headers.authorization)).toEqual(Array(3).fill(`Bearer ${UPSTREAM_TOKEN}-1`));
    expect(JSON.stringify(upstream.requests)).not.toContain(bearer);
    expect(tokenEndpoint.calls).toHaveLength(1);
    expect(tokenEndpoint.calls[0]?.form.get('grant_type')).toBe('client_credentials');
    expect(tokenEndpoint.calls[0]?.form.get('resource')).toBe(upstream.url);
    expect(JSON.stringify(tokenEndpoint.calls)).not.toContain(bearer);
  });

  it('a failing token endpoint → 502 with a JSON-RPC error; nothing reaches the upstream; no secret in the answer', async () => {
    const gw = await gateway();
    tokenEndpoint.respond(() => json({ error: 'invalid_client', error_description: SECRET_V1 }, 401));
    const response = await post(gw, '/cc/mcp', await callerToken(CC));
    expect(response.status).toBe(502);
    expect(response.headers.get('www-authenticate')).toBeNull();
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32603, message: 'Gateway could not obtain credentials for the upstream MCP server' },
    });
    expect(text).not.toContain(SECRET_V1);
    expect(upstream.requests).toHaveLength(0);
  });

  it('F7 credential rotation: a gateway built from the rotated config authenticates with the new secret; no secret is logged', async () => {
    const before = await gateway({ secret: SECRET_V1 });
    await post(before, '/cc/mcp', await callerToken(CC));
    const after = await gateway({ secret: SECRET_V2 });
    await post(after, '/cc/mcp', await callerToken(CC));
    expect(tokenEndpoint.calls.map((call) => call.authorization)).toEqual([
      basicCredentials('gateway', SECRET_V1),
      basicCredentials('gateway', SECRET_V2),
    ]);
    expect(upstream.requests.map((request) => request.headers.authorization)).toEqual([`Bearer ${UPSTREAM_TOKEN}-1`, `Bearer ${UPSTREAM_TOKEN}-2`]);
    const logs = [...before.logs, ...after.logs].join('\n');
    for (const secret of [SECRET_V1, SECRET_V2, UPSTREAM_TOKEN]) expect(logs).not.toContain(secret);
  });
});

describe('token_exchange upstream auth (RFC 8693)', () => {
  it('the caller token goes only to the token endpoint as subject_token; each principal gets its own upstream token', async () => {
    const gw = await gateway();
    const [alice, bob] = [await callerToken(TX, 'alice'), await callerToken(TX, 'bob')];
    await post(gw, '/tx/mcp', alice);
    await post(gw, '/tx/mcp', bob);
    await post(gw, '/tx/mcp', alice);
    expect(tokenEndpoint.calls.map((call) => call.form.get('subject_token'))).toEqual([alice, bob]);
    expect(tokenEndpoint.calls[0]?.form.get('audience')).toBe('calc-api');
    expect(upstream.requests.map((request) => request.headers.authorization)).toEqual([
      `Bearer ${UPSTREAM_TOKEN}-1`,
      `Bearer ${UPSTREAM_TOKEN}-2`,
      `Bearer ${UPSTREAM_TOKEN}-1`,
    ]);
    const seen = JSON.stringify(upstream.requests);
    expect(seen).not.toContain(alice);
    expect(seen).not.toContain(bob);
  });

  it('two replicas sharing Redis exchange once per principal; Redis never holds either token', async () => {
    const redis: RedisHandle = await startRedis();
    const keyPrefix = uniquePrefix('upstream-credentials');
    try {
      const replicas = [];
      for (let i = 0; i < 2; i++) {
        const cache = createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
        expect(await cache.whenReady(10_000)).toBe(true);
        replicas.push(await gateway({ cache }));
      }
      const alice = await callerToken(TX, 'alice');
      for (const gw of replicas) expect((await post(gw, '/tx/mcp', alice)).status).toBe(200);
      expect(tokenEndpoint.calls).toHaveLength(1);

      const { Redis } = await import('ioredis');
      const raw = new Redis(redis.url);
      try {
        const keys = await raw.keys(`${keyPrefix}*`);
        const values = await Promise.all(keys.map((key) => raw.get(key)));
        const dump = [...keys, ...values].join('\n');
        for (const secret of [alice, alice.split('.')[2] ?? '', UPSTREAM_TOKEN, SECRET_V1]) expect(dump).not.toContain(secret);
      } finally {
        raw.disconnect();
      }
    } finally {
      await Promise.all(running.splice(0).map((gw) => gw.close()));
      await redis.stop();
    }
  });
});

describe('identity assertion to the upstream', () => {
  it('F3 carries a JWT the upstream verifies with the gateway JWKS; a client-sent copy never gets through', async () => {
    const gw = await gateway();
    const forged = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.';
    await post(gw, '/cc/mcp', await callerToken(CC), { 'x-gateway-identity': forged, 'x_gateway_identity': forged });
    const received = upstream.requests[0]?.headers;
    const assertion = received?.['x-gateway-identity'];
    expect(typeof assertion).toBe('string');
    expect(assertion).not.toBe(forged);
    expect(JSON.stringify(upstream.requests[0]?.rawHeaders)).not.toContain(forged);

    const jwks = createRemoteJWKSet(new URL(`${gw.url}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(String(assertion), jwks, {
      issuer: PUBLIC,
      audience: new URL(upstream.url).origin,
      typ: IDENTITY_ASSERTION_TYP,
      algorithms: ['ES256'],
    });
    expect(payload).toMatchObject({ sub: 'alice', client_id: 'client-1', scope: 'mcp:tools' });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(30);
    expect(protectedHeader.alg).toBe('ES256');
  });

  it('the JWKS is public-key only, served without auth with Cache-Control; 404 when nothing asserts identity', async () => {
    const gw = await gateway();
    const response = await fetch(`${gw.url}/.well-known/jwks.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const { keys } = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0] ?? {}).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);

    const without = await startGateway(configYaml({ identity: false }).replace(/^signing_key:.*$/m, ''), { env: { CLIENT_SECRET: SECRET_V1 } });
    running.push(without);
    expect((await fetch(`${without.url}/.well-known/jwks.json`)).status).toBe(404);
  });
});
