import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { basicCredentials } from '../../../src/auth/introspection-client.js';
import { createIntrospectionVerifier, type IntrospectionVerifierDeps } from '../../../src/auth/introspection-verifier.js';
import type { TokenVerifier } from '../../../src/decision/ports.js';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import type { CacheStore } from '../../../src/cache/store.js';
import { Secret } from '../../../src/config/secret.js';
import type { IntrospectionSettings } from '../../../src/config/types.js';
import { createAuthCounters } from '../../../src/observability/auth-counters.js';
import { captureLogs } from '../../helpers/capture-logs.js';
import { outcome } from '../../helpers/outcome.js';
import {
  active,
  inactive,
  INTROSPECTION_SECRET,
  introspectionSettings,
  startIntrospectionServer,
  type Reply,
  type TestIntrospectionServer,
} from '../../helpers/introspection-server.js';

const RESOURCE = 'https://gw.example.test/calc/mcp';
const ISSUER = 'https://as.example.test';
const START = 1_800_000_000_000;

let as: TestIntrospectionServer;
let store: CacheStore;
let time: number;
const now = (): number => time;
const seconds = (ms: number): number => Math.floor(ms / 1000);
const token = (): string => randomBytes(24).toString('base64url');
const goodAnswer = (extra: Record<string, unknown> = {}): Reply =>
  active({ iss: ISSUER, sub: 'alice', aud: [RESOURCE], exp: seconds(time) + 3600, ...extra });

beforeEach(async () => {
  time = START;
  as = await startIntrospectionServer();
  store = createMemoryStore({ now });
});

afterEach(async () => {
  await as.close();
});

function verifier(overrides: Partial<IntrospectionSettings> = {}, deps: Partial<IntrospectionVerifierDeps> = {}): TokenVerifier {
  return createIntrospectionVerifier(introspectionSettings(as.endpoint, overrides), {
    store,
    keySecret: randomBytes(32),
    audiences: [RESOURCE],
    now,
    ...deps,
  });
}


describe('introspection request (RFC 7662 §2.1)', () => {
  it('POSTs the token as a form with token_type_hint=access_token and client_secret_basic', async () => {
    as.respond(() => goodAnswer());
    const sent = token();
    await verifier().verify(sent);
    const [call] = as.calls;
    expect(call?.contentType).toBe('application/x-www-form-urlencoded');
    expect(call?.token).toBe(sent);
    expect(call?.form.get('token_type_hint')).toBe('access_token');
    expect(call?.form.has('client_secret')).toBe(false);
    expect(call?.authorization).toBe(basicCredentials('gateway', INTROSPECTION_SECRET));
  });

  it('form-urlencodes client id and secret before base64 (RFC 6749 §2.3.1)', () => {
    const header = basicCredentials('gw client:1', "p@ss:wörd+/!'()*~");
    const decoded = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString('utf8');
    expect(decoded).toBe('gw+client%3A1:p%40ss%3Aw%C3%B6rd%2B%2F%21%27%28%29*%7E');
  });

  it('sends client_id and client_secret in the body with client_secret_post, and no Authorization header', async () => {
    as.respond(() => goodAnswer());
    await verifier({ authMethod: 'client_secret_post', clientSecret: new Secret('s e+cret') }).verify(token());
    const [call] = as.calls;
    expect(call?.authorization).toBeUndefined();
    expect(call?.form.get('client_id')).toBe('gateway');
    expect(call?.form.get('client_secret')).toBe('s e+cret');
  });
});

describe('introspection answer → AuthContext', () => {
  it('maps the claims', async () => {
    const exp = seconds(time) + 600;
    as.respond(() => goodAnswer({ client_id: 'app', scope: 'mcp:tools  calc:write', exp }));
    const context = await verifier().verify(token());
    expect(context).toEqual({
      issuer: ISSUER,
      subject: 'alice',
      clientId: 'app',
      scopes: new Set(['mcp:tools', 'calc:write']),
      audience: [RESOURCE],
      expiresAt: exp * 1000,
      tokenKind: 'introspection',
    });
  });

  it('uses the endpoint as the principal namespace when neither the answer nor the config names an issuer', async () => {
    as.respond(() => goodAnswer({ iss: undefined }));
    const context = await verifier({ issuer: undefined }).verify(token());
    expect(context.issuer).toBe(as.endpoint.href);
  });

  it('accepts any iss when none is pinned', async () => {
    as.respond(() => goodAnswer({ iss: 'https://other-as.example.test' }));
    await expect(verifier({ issuer: undefined }).verify(token())).resolves.toMatchObject({
      issuer: 'https://other-as.example.test',
    });
  });

  it('without exp (optional in RFC 7662) trusts active:true for max_ttl only, then asks again', async () => {
    as.respond(() => goodAnswer({ exp: undefined }));
    const gateway = verifier({ maxTtl: 60_000 });
    const sent = token();
    await expect(gateway.verify(sent)).resolves.toMatchObject({ expiresAt: START + 60_000 });
    time += 60_000 - 1;
    await gateway.verify(sent);
    expect(as.calls).toHaveLength(1);
    time += 1;
    await gateway.verify(sent);
    expect(as.calls).toHaveLength(2);
  });

  it.each([
    ['urn:ietf:params:oauth:token-type:refresh_token'],
    ['Refresh_Token'],
  ])('refuses token_type %s', async (tokenType) => {
    as.respond(() => goodAnswer({ token_type: tokenType }));
    expect(await outcome(verifier().verify(token()), { withReason: true })).toBe('invalid_token:introspection_refresh_token');
  });

  it.each([['Bearer'], ['access_token'], ['urn:ietf:params:oauth:token-type:access_token']])(
    'accepts token_type %s',
    async (tokenType) => {
      as.respond(() => goodAnswer({ token_type: tokenType }));
      await expect(verifier().verify(token())).resolves.toMatchObject({ subject: 'alice' });
    },
  );

  it('K16 nbf: within clock_tolerance accepted; beyond refused, then accepted from the cached answer once nbf is reached', async () => {
    as.respond(() => goodAnswer({ nbf: seconds(time) + 29 }));
    await expect(verifier({ clockTolerance: 30_000 }).verify(token())).resolves.toMatchObject({ subject: 'alice' });

    as.respond(() => goodAnswer({ nbf: seconds(time) + 120 }));
    const gateway = verifier({ clockTolerance: 30_000 });
    const early = token();
    expect(await outcome(gateway.verify(early), { withReason: true })).toBe('invalid_token:introspection_not_yet_valid');
    time += 90_000;
    await expect(gateway.verify(early)).resolves.toMatchObject({ subject: 'alice' });
    expect(as.calls).toHaveLength(2);
  });

  it('K16 an nbf that is not a number makes the answer malformed', async () => {
    as.respond(() => goodAnswer({ nbf: String(seconds(time)) }));
    expect(await outcome(verifier().verify(token()), { withReason: true })).toBe('auth_unavailable:introspection_malformed');
  });

  it('refuses an answer larger than 64 KiB as malformed', async () => {
    as.respond(() => goodAnswer({ padding: 'x'.repeat(70_000) }));
    expect(await outcome(verifier().verify(token()), { withReason: true })).toBe('auth_unavailable:introspection_malformed');
  });
});

describe('in-process cache (memory store, injected clock)', () => {
  it('D2 a positive entry lives min(max_ttl, exp − now)', async () => {
    const exp = seconds(time) + 20;
    as.respond(() => goodAnswer({ exp }));
    const gateway = verifier({ maxTtl: 300_000 });
    const sent = token();
    await gateway.verify(sent);
    time += 19_999;
    await gateway.verify(sent);
    expect(as.calls).toHaveLength(1);
    time += 2;
    expect(await outcome(gateway.verify(sent), { withReason: true })).toBe('invalid_token:introspection_expired');
    expect(as.calls).toHaveLength(2);
  });

  it('D3 revocation is seen once max_ttl has passed', async () => {
    as.respond(() => goodAnswer());
    const gateway = verifier({ maxTtl: 1_000 });
    const sent = token();
    await gateway.verify(sent);
    as.respond(() => inactive);
    time += 999;
    await expect(gateway.verify(sent)).resolves.toMatchObject({ subject: 'alice' });
    time += 1;
    expect(await outcome(gateway.verify(sent), { withReason: true })).toBe('invalid_token:introspection_inactive');
    expect(as.calls).toHaveLength(2);
  });

  it('D4 a negative entry lives negative_ttl; 0 disables negative caching', async () => {
    as.respond(() => inactive);
    const sent = token();
    const cached = verifier({ negativeTtl: 5_000 });
    await outcome(cached.verify(sent), { withReason: true });
    await outcome(cached.verify(sent), { withReason: true });
    expect(as.calls).toHaveLength(1);

    const uncached = verifier({ negativeTtl: 0 });
    await outcome(uncached.verify(sent), { withReason: true });
    await outcome(uncached.verify(sent), { withReason: true });
    expect(as.calls).toHaveLength(3);
  });

  it('reads a corrupt or foreign cache value as a miss', async () => {
    as.respond(() => goodAnswer());
    const corrupting: CacheStore = { ...store, get: () => Promise.resolve('{"active":true,"aud":"not-an-array","until":9e15}') };
    await expect(verifier({}, { store: corrupting }).verify(token())).resolves.toMatchObject({ subject: 'alice' });
    expect(as.calls).toHaveLength(1);
  });

  it('counts hits, misses, negative hits, AS calls and AS errors by reason', async () => {
    const counters = createAuthCounters();
    const gateway = verifier({}, { counters });
    const good = token();
    const bad = token();
    as.respond((call) => (call.token === good ? goodAnswer() : inactive));
    await gateway.verify(good);
    await gateway.verify(good);
    await outcome(gateway.verify(bad), { withReason: true });
    await outcome(gateway.verify(bad), { withReason: true });
    as.respond(() => ({ status: 503, body: '' }));
    await outcome(gateway.verify(token()), { withReason: true });
    expect(counters.snapshot()).toEqual({
      cacheHits: 1,
      cacheMisses: 3,
      negativeHits: 1,
      asCalls: 3,
      asErrors: { server_error: 1 },
    });
  });
});

describe('operator logs', () => {
  it('one error line per failure reason per 10 s, with the number folded into the next one', async () => {
    as.respond(() => ({ status: 500, body: '' }));
    const logs = captureLogs();
    const gateway = verifier({}, { logger: logs.logger });
    for (let attempt = 0; attempt < 3; attempt += 1) await outcome(gateway.verify(token()), { withReason: true });
    time += 10_000;
    await outcome(gateway.verify(token()), { withReason: true });
    const errors = logs.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 50);
    expect(errors.map((line) => [line.failure, line.suppressed])).toEqual([
      ['server_error', 0],
      ['server_error', 2],
    ]);
  });
});

describe('TokenVerifier lifecycle', () => {
  it('is ready at once, warm and close never throw', async () => {
    const gateway = verifier();
    expect(gateway.isReady()).toBe(true);
    await expect(gateway.warm()).resolves.toBeUndefined();
    await expect(gateway.close()).resolves.toBeUndefined();
  });
});
