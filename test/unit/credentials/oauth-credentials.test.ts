import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { basicCredentials } from '../../../src/auth/introspection-client.js';
import type { AuthContext } from '../../../src/decision/ports.js';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import { createRedisStore, type RedisStore } from '../../../src/cache/redis-store.js';
import type { CacheStore } from '../../../src/cache/store.js';
import { Secret } from '../../../src/config/secret.js';
import type { TokenEndpointSettings } from '../../../src/config/types.js';
import { createOAuthHeaders, type OAuthUpstreamAuth } from '../../../src/credentials/oauth-credentials.js';
import { deferred, json, startIntrospectionServer, type Reply, type TestIntrospectionServer } from '../../helpers/introspection-server.js';
import { outcome } from '../../helpers/outcome.js';
import { startRedis, uniquePrefix, type RedisHandle } from '../../helpers/redis.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../../helpers/redis-timeouts.js';

const START = 1_800_000_000_000;
const CLIENT_SECRET = 'client-secret-canary-0c7d';
const SUBJECT_TOKEN = 'caller-token-canary-7a21';
const UPSTREAM_TOKEN = 'upstream-token-canary-e19b';

let endpoint: TestIntrospectionServer;
let time: number;
const now = (): number => time;
let issued = 0;

function alice(overrides: Partial<AuthContext> = {}): AuthContext {
  return {
    issuer: 'https://as.example.test',
    subject: 'alice',
    clientId: 'client-1',
    scopes: new Set(['mcp:tools']),
    audience: ['https://gw.example.test/calc/mcp'],
    expiresAt: START + 3_600_000,
    tokenKind: 'jwt',
    ...overrides,
  };
}

/** A token answer; each one carries a fresh token so reuse and refetch are told apart. */
function tokenAnswer(extra: Record<string, unknown> = { expires_in: 300 }): Reply {
  issued += 1;
  return json({ access_token: `${UPSTREAM_TOKEN}-${issued}`, token_type: 'Bearer', ...extra });
}

function settings(overrides: Partial<TokenEndpointSettings> = {}): TokenEndpointSettings {
  return {
    tokenEndpoint: new URL('/token', endpoint.endpoint),
    clientId: 'gateway',
    clientAuth: { method: 'client_secret_basic', clientSecret: new Secret(CLIENT_SECRET) },
    scopes: ['calc:read', 'calc:write'],
    resource: 'http://calc.internal:3000/mcp',
    audience: 'calc-api',
    timeout: 1_000,
    ...overrides,
  };
}

function provider(type: OAuthUpstreamAuth['type'], overrides: Partial<TokenEndpointSettings> = {}, store: CacheStore = memory, keySecret = KEY_SECRET) {
  return createOAuthHeaders({ type, ...settings(overrides) }, { store, keySecret, now });
}

const KEY_SECRET = randomBytes(32);
let memory: CacheStore;

beforeEach(async () => {
  time = START;
  issued = 0;
  memory = createMemoryStore({ now });
  endpoint = await startIntrospectionServer();
  endpoint.respond(() => tokenAnswer());
});

afterEach(async () => {
  await endpoint.close();
});

describe('client_credentials', () => {
  it('POSTs the grant with scope, resource, audience and client_secret_basic; sends the token as Bearer', async () => {
    const headers = await provider('client_credentials')(alice(), SUBJECT_TOKEN);
    expect(headers).toEqual({ authorization: `Bearer ${UPSTREAM_TOKEN}-1` });
    const [call] = endpoint.calls;
    expect(Object.fromEntries(call?.form ?? [])).toEqual({
      grant_type: 'client_credentials',
      scope: 'calc:read calc:write',
      resource: 'http://calc.internal:3000/mcp',
      audience: 'calc-api',
    });
    expect(call?.authorization).toBe(basicCredentials('gateway', CLIENT_SECRET));
    expect(call?.contentType).toBe('application/x-www-form-urlencoded');
    expect(JSON.stringify(endpoint.calls)).not.toContain(SUBJECT_TOKEN);
  });

  it('client_secret_post puts the credentials in the form instead', async () => {
    await provider('client_credentials', { clientAuth: { method: 'client_secret_post', clientSecret: new Secret(CLIENT_SECRET) } })(alice(), SUBJECT_TOKEN);
    const [call] = endpoint.calls;
    expect(call?.authorization).toBeUndefined();
    expect(call?.form.get('client_id')).toBe('gateway');
    expect(call?.form.get('client_secret')).toBe(CLIENT_SECRET);
  });

  it('private_key_jwt sends an RFC 7523 assertion the endpoint verifies with the public key', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'gw-key' });
    await provider('client_credentials', { clientAuth: { method: 'private_key_jwt', privateKey: new Secret(jwk) } })(alice(), SUBJECT_TOKEN);
    const form = endpoint.calls[0]?.form;
    expect(form?.get('client_id')).toBe('gateway');
    expect(form?.get('client_secret')).toBeNull();
    expect(form?.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    const tokenEndpoint = new URL('/token', endpoint.endpoint).href;
    const { payload, protectedHeader } = await jwtVerify(form?.get('client_assertion') ?? '', publicKey, {
      issuer: 'gateway',
      subject: 'gateway',
      audience: tokenEndpoint,
      currentDate: new Date(START),
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'gw-key' });
    expect(payload.exp).toBe(START / 1000 + 60);
    expect(typeof payload.jti).toBe('string');
  });

  it('caches the token until a margin before expiry (300 s token → refreshed after 240 s)', async () => {
    const headersFor = provider('client_credentials');
    await headersFor(alice(), SUBJECT_TOKEN);
    time = START + 239_000;
    expect(await headersFor(alice({ subject: 'bob' }), SUBJECT_TOKEN)).toEqual({ authorization: `Bearer ${UPSTREAM_TOKEN}-1` });
    time = START + 240_000;
    expect(await headersFor(alice(), SUBJECT_TOKEN)).toEqual({ authorization: `Bearer ${UPSTREAM_TOKEN}-2` });
    expect(endpoint.calls).toHaveLength(2);
  });

  it.each<[string, Record<string, unknown>, number]>([
    ['no expires_in: assumed 60 s, reused 45 s', {}, 45_000],
    ['a 20 s token: a quarter of it is the margin', { expires_in: 20 }, 15_000],
    ['expires_in as a digit string', { expires_in: '300' }, 240_000],
  ])('%s', async (_title, extra, reusableMs) => {
    endpoint.respond(() => tokenAnswer(extra));
    const headersFor = provider('client_credentials');
    await headersFor(alice(), SUBJECT_TOKEN);
    time = START + reusableMs - 1;
    await headersFor(alice(), SUBJECT_TOKEN);
    expect(endpoint.calls).toHaveLength(1);
    time = START + reusableMs;
    await headersFor(alice(), SUBJECT_TOKEN);
    expect(endpoint.calls).toHaveLength(2);
  });

  it('single flight: 50 concurrent callers cause one token request', async () => {
    const gate = deferred();
    endpoint.respond(async () => {
      await gate.promise;
      return tokenAnswer();
    });
    const headersFor = provider('client_credentials');
    const all = Promise.all(Array.from({ length: 50 }, () => headersFor(alice(), SUBJECT_TOKEN)));
    await endpoint.waitForCalls(1);
    gate.release();
    const results = await all;
    expect(new Set(results.map((headers) => headers.authorization))).toEqual(new Set([`Bearer ${UPSTREAM_TOKEN}-1`]));
    expect(endpoint.calls).toHaveLength(1);
  });

  it.each<[string, Reply, string]>([
    ['401 invalid_client', json({ error: 'invalid_client' }, 401), 'token_endpoint_refused_401'],
    ['400 invalid_scope', json({ error: 'invalid_scope' }, 400), 'token_endpoint_refused_400'],
    ['500', json({}, 500), 'token_endpoint_server_error_500'],
    ['302 redirect (never followed)', { status: 302, body: '' }, 'token_endpoint_network'],
    ['204 no content', { status: 204, body: '' }, 'token_endpoint_unexpected_status_204'],
    ['not JSON', { body: 'ok', contentType: 'text/plain' }, 'token_endpoint_malformed'],
    ['no access_token', json({ token_type: 'Bearer' }), 'token_endpoint_malformed'],
    ['an access_token that would split a header', json({ access_token: 'a\r\nx-evil: 1', token_type: 'Bearer' }), 'token_endpoint_malformed'],
    ['token_type N_A', json({ access_token: 'x', token_type: 'N_A' }), 'token_endpoint_unsupported_token_type'],
    ['token_type DPoP', json({ access_token: 'x', token_type: 'DPoP' }), 'token_endpoint_unsupported_token_type'],
    ['a negative expires_in', json({ access_token: 'x', token_type: 'Bearer', expires_in: -5 }), 'token_endpoint_malformed'],
    ['connection reset', 'reset', 'token_endpoint_network'],
    ['never answering', 'hang', 'token_endpoint_timeout'],
  ])('%s → upstream_credentials_failed (502), never cached', async (_title, reply, reason) => {
    endpoint.respond(() => reply);
    // Only the hanging case should reach the timeout; a loaded machine must not turn a slow answer into one.
    const headersFor = provider('client_credentials', { timeout: reply === 'hang' ? 1_000 : 10_000 });
    expect(await outcome(headersFor(alice(), SUBJECT_TOKEN), { withReason: true })).toBe(`upstream_credentials_failed:${reason}`);
    endpoint.respond(() => tokenAnswer());
    expect(await headersFor(alice(), SUBJECT_TOKEN)).toEqual({ authorization: `Bearer ${UPSTREAM_TOKEN}-1` });
  });

  it('F7 a rotated client secret never reuses the token fetched with the old one, and sends the new secret', async () => {
    await provider('client_credentials')(alice(), SUBJECT_TOKEN);
    const rotated = provider('client_credentials', { clientAuth: { method: 'client_secret_basic', clientSecret: new Secret('rotated-secret') } });
    expect(await rotated(alice(), SUBJECT_TOKEN)).toEqual({ authorization: `Bearer ${UPSTREAM_TOKEN}-2` });
    expect(endpoint.calls.map((call) => call.authorization)).toEqual([
      basicCredentials('gateway', CLIENT_SECRET),
      basicCredentials('gateway', 'rotated-secret'),
    ]);
  });
});

describe('token_exchange (RFC 8693)', () => {
  it('sends the caller token as subject_token, requesting an access token for the upstream', async () => {
    expect(await provider('token_exchange')(alice(), SUBJECT_TOKEN)).toEqual({ authorization: `Bearer ${UPSTREAM_TOKEN}-1` });
    expect(Object.fromEntries(endpoint.calls[0]?.form ?? [])).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: SUBJECT_TOKEN,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      scope: 'calc:read calc:write',
      resource: 'http://calc.internal:3000/mcp',
      audience: 'calc-api',
    });
  });

  it('caches per principal (issuer, subject, client id) and granted scope set', async () => {
    const headersFor = provider('token_exchange');
    const tokenOf = async (auth: AuthContext) => (await headersFor(auth, SUBJECT_TOKEN)).authorization;
    const first = await tokenOf(alice());
    expect(await tokenOf(alice({ scopes: new Set(['mcp:tools']) }))).toBe(first);
    const others = [
      await tokenOf(alice({ subject: 'bob' })),
      await tokenOf(alice({ clientId: 'client-2' })),
      await tokenOf(alice({ issuer: 'https://other-as.example.test' })),
      await tokenOf(alice({ scopes: new Set(['mcp:tools', 'calc:write']) })),
    ];
    expect(new Set([first, ...others]).size).toBe(5);
    expect(endpoint.calls).toHaveLength(5);
  });

  it("is never reused after the caller's token expired, even when the upstream token lives longer", async () => {
    const headersFor = provider('token_exchange');
    await headersFor(alice({ expiresAt: START + 30_000 }), SUBJECT_TOKEN);
    time = START + 29_999;
    await headersFor(alice(), SUBJECT_TOKEN);
    expect(endpoint.calls).toHaveLength(1);
    time = START + 30_000;
    await headersFor(alice(), SUBJECT_TOKEN);
    expect(endpoint.calls).toHaveLength(2);
  });
});

describe('shared across replicas through Redis', () => {
  let redis: RedisHandle;
  let raw: Redis;
  const stores: RedisStore[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
  });

  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    raw.disconnect();
    await redis.stop();
  });

  async function replicaStore(keyPrefix: string): Promise<RedisStore> {
    const store = createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
    stores.push(store);
    expect(await store.whenReady(10_000)).toBe(true);
    return store;
  }

  it.each<OAuthUpstreamAuth['type']>(['client_credentials', 'token_exchange'])(
    '%s: a second replica uses the first one’s token; Redis holds neither token nor secret readable',
    async (type) => {
      const keyPrefix = uniquePrefix(`oauth-${type}`);
      const first = provider(type, {}, await replicaStore(keyPrefix));
      const second = provider(type, {}, await replicaStore(keyPrefix));
      const fromFirst = await first(alice(), SUBJECT_TOKEN);
      expect(await second(alice(), SUBJECT_TOKEN)).toEqual(fromFirst);
      expect(endpoint.calls).toHaveLength(1);

      const keys = await raw.keys(`${keyPrefix}*`);
      expect(keys).toHaveLength(1);
      const dump = [...keys, ...(await Promise.all(keys.map((key) => raw.get(key))))].join('\n');
      for (const secret of [UPSTREAM_TOKEN, SUBJECT_TOKEN, CLIENT_SECRET, 'alice', 'gateway']) expect(dump).not.toContain(secret);
    },
  );

  it('a replica with another cache key secret cannot open the entry and fetches its own', async () => {
    const keyPrefix = uniquePrefix('oauth-foreign');
    const first = provider('client_credentials', {}, await replicaStore(keyPrefix));
    const foreign = provider('client_credentials', {}, await replicaStore(keyPrefix), randomBytes(32));
    await first(alice(), SUBJECT_TOKEN);
    expect(await foreign(alice(), SUBJECT_TOKEN)).toEqual({ authorization: `Bearer ${UPSTREAM_TOKEN}-2` });
  });
});
