import { randomBytes, randomUUID } from 'node:crypto';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCacheStore } from '../../src/cache/create-store.js';
import type { CacheStore } from '../../src/cache/store.js';
import { createConsentLinks } from '../../src/consent/links.js';
import { createGrantStore, type UserGrant } from '../../src/consent/grant-store.js';
import { compileOrThrow, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { active, inactive, INTROSPECTION_SECRET, startIntrospectionServer, type TestIntrospectionServer } from '../helpers/introspection-server.js';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

/**
 * The in-process store (no Redis) under the floods an outside attack sent (12,000 garbage tokens, 10,500 consent
 * links against one 10,000-entry LRU): what unauthenticated or one-caller traffic creates must not evict the
 * sessions and grants of everyone else. The bounds are scaled down (`cache.memory`) so each flood outgrows them,
 * as the attack outgrew the shared LRU, in a few seconds; bench/store-floods.ts replays it at full size.
 */
const PUBLIC = 'https://gw.example.test';
const RESOURCE = `${PUBLIC}/notes/mcp`;
const AS_ISSUER = 'https://as.example.test';
const KEY_SECRET = 'k'.repeat(32);
const LIVE_SESSIONS = 200;
/** Room for the live sessions and valid answers, and for the grants (each with its revocation epoch). */
const LIVE_BOUND = 300;
const GRANT_BOUND = 500;
/** The smallest bound the schema allows. */
const OTHER_BOUND = 100;
/** Three times the largest bound: in one shared LRU of any of these sizes, nothing of the live state would stay. */
const GARBAGE_TOKENS = 1_500;
const CONSENT_LINKS = 1_500;
const CONCURRENCY = 16;

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const PING = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });

let as: TestIntrospectionServer;
let upstream: TestUpstream;
let gw: RunningGateway;
let store: CacheStore;

/** `validToken(index)` is active for user-<index>; everything else is garbage the AS calls inactive. */
const validToken = (index: number) => `valid-${index}-${'v'.repeat(24)}`;

beforeAll(async () => {
  [as, upstream] = await Promise.all([startIntrospectionServer(), startTestUpstream()]);
  as.respond(({ token }) => {
    const match = /^valid-(\d+)-/.exec(token ?? '');
    if (!match) return inactive;
    return active({ iss: AS_ISSUER, sub: `user-${match[1]}`, client_id: 'client-1', aud: RESOURCE, scope: 'mcp:tools', exp: Math.floor(Date.now() / 1000) + 3_600 });
  });
  upstream.respondWith((request, response) => {
    response.setHeader('content-type', 'application/json');
    if (request.body.includes('"initialize"')) response.setHeader('mcp-session-id', randomUUID());
    response.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }));
  });
  const yaml = `
public_url: ${PUBLIC}
cache:
  key_secret: "${KEY_SECRET}"
  memory:
    sessions: ${LIVE_BOUND}
    grants: ${GRANT_BOUND}
    introspection: ${LIVE_BOUND}
    introspection_negative: ${OTHER_BOUND}
    consent_links: ${OTHER_BOUND}
    consent_flows: ${OTHER_BOUND}
    upstream_tokens: ${OTHER_BOUND}
    rate_limits: ${OTHER_BOUND}
routes:
  - name: notes
    path: /notes/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${AS_ISSUER}]
    tokens:
      introspection: { endpoint: ${as.endpoint.href}, client_id: gateway, client_secret: "\${env:INTROSPECTION_SECRET}", issuer: ${AS_ISSUER}, timeout: 60s }
`;
  const env = { INTROSPECTION_SECRET };
  // The store the gateway builds from its config: the in-process one, with the bounds above.
  store = createCacheStore(compileOrThrow(yaml, env).cache);
  gw = await startGateway(yaml, { env, cache: store });
});

afterAll(async () => {
  await gw.close();
  await Promise.all([as.close(), upstream.close()]);
});

function post(bearer: string, body: string, session?: string): Promise<Response> {
  return fetch(`${gw.url}/notes/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(session === undefined ? {} : { 'mcp-session-id': session }),
    },
    body,
  });
}

/** Runs `task(0..count-1)` with at most CONCURRENCY at once; resolves with every result. */
async function inWaves<T>(count: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return results;
}

async function openSessions(): Promise<string[]> {
  return inWaves(LIVE_SESSIONS, async (index) => {
    const response = await post(validToken(index), INITIALIZE);
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    return response.headers.get('mcp-session-id') ?? '';
  });
}

async function sessionStatuses(sessions: readonly string[]): Promise<number[]> {
  return inWaves(sessions.length, async (index) => {
    const response = await post(validToken(index), PING, sessions[index]);
    await response.arrayBuffer();
    return response.status;
  });
}

function grantOf(index: number): UserGrant {
  return { issuer: AS_ISSUER, subject: `user-${index}`, route: 'notes', accessToken: `vendor-token-${index}`, scopes: [], grantedAt: 1, issuedAt: 1 };
}

describe('store floods (in-process store)', () => {
  it('a garbage-token flood three times the largest bound leaves every live session, grant and cached valid answer in place', { timeout: 90_000 }, async () => {
    const sessions = await openSessions();
    const grants = createGrantStore(store, Buffer.from(KEY_SECRET));
    for (let index = 0; index < LIVE_SESSIONS; index += 1) expect(await grants.save(grantOf(index), 3_600_000)).toBe(true);
    expect(await sessionStatuses(sessions)).toEqual(sessions.map(() => 200));
    const introspectedBefore = as.calls.length;

    const garbage = await inWaves(GARBAGE_TOKENS, async () => {
      const response = await post(randomBytes(24).toString('base64url'), PING);
      await response.arrayBuffer();
      return response.status;
    });
    expect(garbage.every((status) => status === 401)).toBe(true);
    expect(as.calls.length - introspectedBefore).toBe(GARBAGE_TOKENS);

    const afterFlood = as.calls.length;
    expect(await sessionStatuses(sessions)).toEqual(sessions.map(() => 200));
    // The valid callers' answers were not evicted either: none of them was introspected again.
    expect(as.calls.length).toBe(afterFlood);
    for (let index = 0; index < LIVE_SESSIONS; index += 1) expect((await grants.get(grantOf(index), 'notes')).kind).toBe('found');
  });

  it('consent links of visitors three times the largest bound leave every grant in place', async () => {
    const grants = createGrantStore(store, Buffer.from(KEY_SECRET));
    const links = createConsentLinks(store, Buffer.from(KEY_SECRET), { publicUrl: PUBLIC, ttlMs: 600_000 });
    for (let index = 0; index < LIVE_SESSIONS; index += 1) await grants.save(grantOf(index), 3_600_000);
    for (let index = 0; index < CONSENT_LINKS; index += 1) {
      expect(await links.issue({ route: 'notes', issuer: AS_ISSUER, subject: `visitor-${index}` })).toBeDefined();
    }
    for (let index = 0; index < LIVE_SESSIONS; index += 1) expect((await grants.get(grantOf(index), 'notes')).kind).toBe('found');
  });
});
