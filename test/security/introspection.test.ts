import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createIntrospectionVerifier, LOCAL_TTL_MS, type IntrospectionVerifierDeps } from '../../src/auth/introspection-verifier.js';
import type { TokenVerifier } from '../../src/decision/ports.js';
import { introspectionCacheKey } from '../../src/cache/cache-keys.js';
import { createRedisStore, type RedisStore } from '../../src/cache/redis-store.js';
import type { CacheStore } from '../../src/cache/store.js';
import type { IntrospectionSettings } from '../../src/config/types.js';
import { createAuthCounters } from '../../src/observability/auth-counters.js';
import { captureLogs } from '../helpers/capture-logs.js';
import {
  active,
  deferred,
  inactive,
  INTROSPECTION_SECRET,
  introspectionSettings,
  json,
  startIntrospectionServer,
  type Reply,
  type TestIntrospectionServer,
} from '../helpers/introspection-server.js';
import { startRedis, uniquePrefix, type RedisHandle } from '../helpers/redis.js';
import { outcome } from '../helpers/outcome.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../helpers/redis-timeouts.js';

const RESOURCE = 'https://gw.example.test/calc/mcp';
const OTHER_RESOURCE = 'https://gw.example.test/files/mcp';
const ISSUER = 'https://as.example.test';
const START = 1_800_000_000_000;

let redis: RedisHandle;
let raw: Redis;
let as: TestIntrospectionServer;
let store: RedisStore;
let prefix: string;
let time: number;
const keySecret = randomBytes(32);
const now = (): number => time;
const seconds = (ms: number): number => Math.floor(ms / 1000);

beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
});

afterAll(async () => {
  raw.disconnect();
  await redis.stop();
});

beforeEach(async () => {
  time = START;
  as = await startIntrospectionServer();
  prefix = uniquePrefix('security-introspection');
  store = createRedisStore({ url: redis.url, keyPrefix: prefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
  expect(await store.whenReady(10_000)).toBe(true);
});

afterEach(async () => {
  await store.close();
  await as.close();
});

function verifier(overrides: Partial<IntrospectionSettings> = {}, deps: Partial<IntrospectionVerifierDeps> = {}): TokenVerifier {
  return createIntrospectionVerifier(introspectionSettings(as.endpoint, overrides), {
    store,
    keySecret,
    audiences: [RESOURCE],
    now,
    ...deps,
  });
}

const randomToken = (): string => randomBytes(32).toString('base64url');
const goodAnswer = (extra: Record<string, unknown> = {}): Reply =>
  active({ iss: ISSUER, sub: 'alice', client_id: 'app', scope: 'mcp:tools', aud: [RESOURCE], exp: seconds(time) + 3600, ...extra });


/**
 * The token is revoked at the AS now: the cached answer still serves it until `ms` from now (no AS call), and at
 * `ms` it is re-introspected and refused.
 */
async function expectRevocationSeenAfter(gateway: TokenVerifier, token: string, ms: number): Promise<void> {
  as.respond(() => inactive);
  time += ms - 1;
  await expect(gateway.verify(token)).resolves.toMatchObject({ subject: 'alice' });
  expect(as.calls).toHaveLength(1);
  time += 1;
  expect(await outcome(gateway.verify(token))).toBe('invalid_token');
  expect(as.calls).toHaveLength(2);
}

/** The real Redis store, with its reads counted. */
function countingReads(inner: RedisStore): { store: CacheStore; reads: () => number } {
  let reads = 0;
  const store: CacheStore = {
    get: (key) => ((reads += 1), inner.get(key)),
    lookup: (key) => ((reads += 1), inner.lookup(key)),
    set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
    delete: (key) => inner.delete(key),
    setIfAbsent: (key, value, ttlMs) => inner.setIfAbsent(key, value, ttlMs),
    deleteIfEquals: (key, value) => inner.deleteIfEquals(key, value),
    touchIfEquals: (key, value, ttlMs) => inner.touchIfEquals(key, value, ttlMs),
    scan: (prefix, limit) => inner.scan(prefix, limit),
    takeToken: (key, bucket, nowMs) => inner.takeToken(key, bucket, nowMs),
    status: () => inner.status(),
    close: () => inner.close(),
  };
  return { store, reads: () => reads };
}

/** Every key of this test's prefix with its TTL and value. */
async function cachedEntries(): Promise<{ key: string; pttl: number; value: string | null }[]> {
  const keys = await raw.keys(`${prefix}*`);
  return Promise.all(keys.map(async (key) => ({ key, pttl: await raw.pttl(key), value: await raw.get(key) })));
}

/** Every key and string value in the whole Redis, whoever wrote it. */
async function dumpRedis(): Promise<string[]> {
  const texts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await raw.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      texts.push(key);
      if ((await raw.type(key)) === 'string') texts.push((await raw.get(key)) ?? '');
    }
  } while (cursor !== '0');
  return texts;
}

function fragments(token: string, length = 8): string[] {
  return Array.from({ length: token.length - length + 1 }, (_, start) => token.slice(start, start + length));
}

describe('D1 valid opaque token: one introspection, then the cache; no token material in Redis', () => {
  it('D1 1 AS call, 100 further requests → 0 calls; no key or value holds the token or an 8-char fragment', async () => {
    as.respond(() => goodAnswer());
    const counters = createAuthCounters();
    const gateway = verifier({}, { counters });
    const token = randomToken();

    const context = await gateway.verify(token);
    expect(context).toMatchObject({ issuer: ISSUER, subject: 'alice', clientId: 'app', tokenKind: 'introspection' });
    expect([...context.scopes]).toEqual(['mcp:tools']);
    for (let request = 0; request < 100; request += 1) await gateway.verify(token);
    expect(as.calls).toHaveLength(1);
    expect(counters.snapshot()).toMatchObject({ cacheHits: 100, cacheMisses: 1, asCalls: 1 });

    const entries = await cachedEntries();
    expect(entries).toHaveLength(1);
    const dump = await dumpRedis();
    expect(dump.length).toBeGreaterThan(0);
    for (const text of dump) {
      expect(fragments(token).filter((fragment) => text.includes(fragment))).toEqual([]);
    }
  });

  it('D1 another replica (own verifier and Redis client, same key secret) reuses the entry', async () => {
    as.respond(() => goodAnswer());
    const token = randomToken();
    await verifier().verify(token);
    const replicaStore = createRedisStore({ url: redis.url, keyPrefix: prefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
    try {
      expect(await replicaStore.whenReady(10_000)).toBe(true);
      const replica = createIntrospectionVerifier(introspectionSettings(as.endpoint), {
        store: replicaStore,
        keySecret,
        audiences: [RESOURCE],
        now,
      });
      await replica.verify(token);
      expect(as.calls).toHaveLength(1);
    } finally {
      await replicaStore.close();
    }
  });
});

describe('D2 the cache never outlives exp', () => {
  it('D2 exp = now + 20 s with max_ttl 300 s → Redis TTL ≤ 20 s; at now + 21 s → re-introspected and refused', async () => {
    const exp = seconds(time) + 20;
    as.respond(() => goodAnswer({ exp }));
    const gateway = verifier({ maxTtl: 300_000 });
    const token = randomToken();
    await gateway.verify(token);

    const [entry] = await cachedEntries();
    expect(entry?.pttl).toBeGreaterThan(0);
    expect(entry?.pttl).toBeLessThanOrEqual(20_000);

    time += 21_000;
    expect(await outcome(gateway.verify(token))).toBe('invalid_token');
    expect(as.calls).toHaveLength(2);
  });
});

describe('D3 revocation is seen within max_ttl, never later', () => {
  it('D3 revoked after a success → served from cache until max_ttl, re-introspected and refused right after', async () => {
    as.respond(() => goodAnswer());
    const gateway = verifier({ maxTtl: 60_000 });
    const token = randomToken();
    await gateway.verify(token);
    const [entry] = await cachedEntries();
    expect(entry?.pttl).toBeLessThanOrEqual(60_000);

    await expectRevocationSeenAfter(gateway, token, 60_000);
  });
});

describe('D3 the in-process tier in front of Redis never stretches the cache', () => {
  it('D3 a local copy expires with its shared entry: exp = now + 1 s → at now + 1 s re-introspected and refused', async () => {
    as.respond(() => goodAnswer({ exp: seconds(time) + 1 }));
    const gateway = verifier();
    const token = randomToken();
    await gateway.verify(token);
    await expectRevocationSeenAfter(gateway, token, 1_000);
  });

  it(`D3 a shared entry deleted by hand is honoured in process for at most LOCAL_TTL_MS (${LOCAL_TTL_MS} ms), then re-introspected`, async () => {
    as.respond(() => goodAnswer());
    const gateway = verifier();
    const token = randomToken();
    await gateway.verify(token);
    await raw.del((await cachedEntries()).map((entry) => entry.key));
    await expectRevocationSeenAfter(gateway, token, LOCAL_TTL_MS);
  });

  it('D1 a reused token within LOCAL_TTL_MS is the same caller object, so per-caller memos hit as for JWTs', async () => {
    as.respond(() => goodAnswer());
    const gateway = verifier();
    const token = randomToken();
    const first = await gateway.verify(token);
    expect(await gateway.verify(token)).toBe(first);
    time += LOCAL_TTL_MS;
    const reread = await gateway.verify(token);
    expect(reread).not.toBe(first);
    expect(reread).toEqual(first);
  });

  it('D1 a reused token within LOCAL_TTL_MS costs no Redis read (answered in process)', async () => {
    as.respond(() => goodAnswer());
    const counted = countingReads(store);
    const gateway = verifier({}, { store: counted.store });
    const token = randomToken();
    await gateway.verify(token);
    const reads = counted.reads();
    for (let i = 0; i < 20; i++) await gateway.verify(token);
    expect(counted.reads()).toBe(reads);
    time += LOCAL_TTL_MS;
    await gateway.verify(token);
    expect(counted.reads()).toBe(reads + 1);
    expect(as.calls).toHaveLength(1);
  });
});

describe('D4 inactive tokens: 401 and a bounded negative entry', () => {
  it('D4 active:false → invalid_token; a burst of 50 + 50 more → 1 AS call; TTL ≤ negative_ttl; then asked again', async () => {
    as.respond(() => inactive);
    const counters = createAuthCounters();
    const gateway = verifier({ negativeTtl: 30_000 }, { counters });
    const token = randomToken();

    const burst = await Promise.all(Array.from({ length: 50 }, () => outcome(gateway.verify(token))));
    expect(new Set(burst)).toEqual(new Set(['invalid_token']));
    for (let request = 0; request < 50; request += 1) expect(await outcome(gateway.verify(token))).toBe('invalid_token');
    expect(as.calls).toHaveLength(1);
    // The 50 in a row are cache hits; of the burst, those whose lookup answered before the answer landed joined the
    // one flight (misses), the others found the stored answer (hits): how many of each is the machine's timing.
    const { negativeHits, cacheMisses } = counters.snapshot();
    expect(negativeHits).toBeGreaterThanOrEqual(50);
    expect(negativeHits + cacheMisses).toBe(100);

    const [entry] = await cachedEntries();
    expect(entry?.pttl).toBeGreaterThan(0);
    expect(entry?.pttl).toBeLessThanOrEqual(30_000);

    time += 30_000;
    expect(await outcome(gateway.verify(token))).toBe('invalid_token');
    expect(as.calls).toHaveLength(2);
  });
});

describe('D5 anything but a boolean active:true in a 200 JSON answer is never active', () => {
  it.each<[string, Reply]>([
    ['{"active":"false"}', json({ active: 'false' })],
    ['{"active":"true"}', json({ active: 'true', aud: [RESOURCE] })],
    ['{"active":1}', json({ active: 1, aud: [RESOURCE] })],
    ['{}', json({})],
    ['[]', json([])],
    ['null', json(null)],
    ['HTML 200', { status: 200, contentType: 'text/html', body: '<html><body>Login</body></html>' }],
    ['HTML labelled as JSON', { status: 200, contentType: 'application/json', body: '<html>oops</html>' }],
    ['text/plain with an active JSON body', { status: 200, contentType: 'text/plain', body: '{"active":true}' }],
    ['no content type', { status: 200, contentType: '', body: '{"active":true}' }],
    ['exp as a string', json({ active: true, aud: [RESOURCE], exp: '1900000000' })],
    ['aud as a number', json({ active: true, aud: 42 })],
    ['scope as an array', json({ active: true, aud: [RESOURCE], scope: ['mcp:tools'] })],
    ['iss null', json({ active: true, aud: [RESOURCE], iss: null })],
  ])('D5 %s → auth_unavailable, nothing cached', async (_case, reply) => {
    as.respond(() => reply);
    const gateway = verifier();
    const token = randomToken();
    expect(await outcome(gateway.verify(token))).toBe('auth_unavailable');
    expect(await cachedEntries()).toEqual([]);
    expect(await outcome(gateway.verify(token))).toBe('auth_unavailable');
    expect(as.calls).toHaveLength(2);
  });
});

describe('D6 active:true but not for this resource, issuer or use', () => {
  it.each<[string, Record<string, unknown>]>([
    ['aud lacks the resource', { aud: [OTHER_RESOURCE] }],
    ['aud is a prefix look-alike', { aud: `${RESOURCE}.attacker.test` }],
    ['no aud', { aud: undefined }],
    ['iss differs', { iss: 'https://evil.example.test' }],
    ['iss with a trailing slash', { iss: `${ISSUER}/` }],
    ['no iss while one is pinned', { iss: undefined }],
    ['token_type refresh_token', { token_type: 'refresh_token' }],
    ['exp in the past', { exp: seconds(START) - 1 }],
    ['exp exactly now', { exp: seconds(START) }],
  ])('D6 %s → invalid_token', async (_case, claims) => {
    as.respond(() => goodAnswer(claims));
    const gateway = verifier();
    const token = randomToken();
    expect(await outcome(gateway.verify(token))).toBe('invalid_token');
    // Decided again from the cached facts, not by asking again.
    expect(await outcome(gateway.verify(token))).toBe('invalid_token');
    expect(as.calls).toHaveLength(1);
  });

  it.each([
    ['nbf 2 minutes ahead (clock_tolerance 30 s)', 120, 30_000],
    ['nbf 1 s ahead with no tolerance', 1, 0],
  ])('K16 %s → invalid_token, also from the cached answer', async (_case, ahead, clockTolerance) => {
    as.respond(() => goodAnswer({ nbf: seconds(time) + ahead }));
    const gateway = verifier({ clockTolerance });
    const token = randomToken();
    expect(await outcome(gateway.verify(token), { withReason: true })).toBe('invalid_token:introspection_not_yet_valid');
    expect(await outcome(gateway.verify(token))).toBe('invalid_token');
    expect(as.calls).toHaveLength(1);
  });

  it('D6 a single-string aud equal to the resource is accepted', async () => {
    as.respond(() => goodAnswer({ aud: RESOURCE }));
    await expect(verifier().verify(randomToken())).resolves.toMatchObject({ audience: [RESOURCE] });
  });

  it('D6 with a list of audiences, an aud holding any one of them is accepted, one holding none refused', async () => {
    const listed = verifier({}, { audiences: ['api://calc', RESOURCE] });
    as.respond(() => goodAnswer({ aud: ['api://calc'] }));
    await expect(listed.verify(randomToken())).resolves.toMatchObject({ audience: ['api://calc'] });
    as.respond(() => goodAnswer({ aud: ['api://files'] }));
    expect(await outcome(listed.verify(randomToken()), { withReason: true })).toBe('invalid_token:introspection_audience');
  });
});

describe('D6 opt-in: answers without aud or iss (RFC 7662 §2.2 makes both optional)', () => {
  it('accept_missing_aud: an answer without aud is accepted, with an empty audience', async () => {
    as.respond(() => goodAnswer({ aud: undefined }));
    await expect(verifier({ acceptMissingAudience: true }).verify(randomToken())).resolves.toMatchObject({ audience: [] });
  });

  it('accept_missing_aud: an aud without the resource is still refused', async () => {
    as.respond(() => goodAnswer({ aud: [OTHER_RESOURCE] }));
    expect(await outcome(verifier({ acceptMissingAudience: true }).verify(randomToken()), { withReason: true })).toBe(
      'invalid_token:introspection_audience',
    );
  });

  it('accept_missing_iss: an answer without iss is accepted as from the pinned issuer (the principal namespace)', async () => {
    as.respond(() => goodAnswer({ iss: undefined }));
    await expect(verifier({ acceptMissingIssuer: true }).verify(randomToken())).resolves.toMatchObject({ issuer: ISSUER, subject: 'alice' });
  });

  it.each([
    ['another iss', 'https://evil.example.test'],
    ['the iss with a trailing slash', `${ISSUER}/`],
  ])('accept_missing_iss: %s is still refused', async (_case, iss) => {
    as.respond(() => goodAnswer({ iss }));
    expect(await outcome(verifier({ acceptMissingIssuer: true }).verify(randomToken()), { withReason: true })).toBe(
      'invalid_token:introspection_issuer',
    );
  });

  it('one cached answer without aud: refused by a strict route, accepted by one that opted in, one AS call', async () => {
    as.respond(() => goodAnswer({ aud: undefined }));
    const token = randomToken();
    expect(await outcome(verifier().verify(token))).toBe('invalid_token');
    await expect(verifier({ acceptMissingAudience: true }).verify(token)).resolves.toMatchObject({ subject: 'alice' });
    expect(as.calls).toHaveLength(1);
  });
});

describe('D7 the AS failing → 503, never 401, never cached', () => {
  it.each<[string, Reply]>([
    ['timeout (never answers)', 'hang'],
    ['500', { status: 500, body: 'oops' }],
    ['502', { status: 502, body: '' }],
    ['503', { status: 503, body: '' }],
    ['429', { status: 429, body: '' }],
    ['404', { status: 404, body: '' }],
    ['400 invalid_request', { status: 400, body: '{"error":"invalid_request"}' }],
    ['400 unsupported_token_type as text/plain', { status: 400, body: '{"error":"unsupported_token_type"}', contentType: 'text/plain' }],
    ['redirect', { status: 307, body: '', contentType: 'text/plain' }],
    ['connection reset', 'reset'],
  ])('D7 %s → auth_unavailable, not cached', async (_case, reply) => {
    as.respond(() => reply);
    const counters = createAuthCounters();
    // Only the hanging case should ever reach the timeout; a loaded machine must not turn a 500 into one.
    const gateway = verifier({ timeout: reply === 'hang' ? 200 : 10_000 }, { counters });
    const token = randomToken();
    expect(await outcome(gateway.verify(token))).toBe('auth_unavailable');
    expect(await cachedEntries()).toEqual([]);
    expect(await outcome(gateway.verify(token))).toBe('auth_unavailable');
    expect(as.calls).toHaveLength(2);
    expect(Object.values(counters.snapshot().asErrors)).toEqual([2]);
  });

  it('D7 a timeout is reported as such', async () => {
    as.respond(() => 'hang');
    const counters = createAuthCounters();
    await outcome(verifier({ timeout: 200 }, { counters }).verify(randomToken()));
    expect(counters.snapshot().asErrors).toEqual({ timeout: 1 });
  });
});

describe('an AS that cannot introspect this kind of token', () => {
  it('400 unsupported_token_type (RFC 7009 §2.2.1; oidc-provider for its JWT access tokens) → invalid_token, cached as inactive', async () => {
    as.respond(() => ({ status: 400, body: '{"error":"unsupported_token_type","error_description":"x"}' }));
    const gateway = verifier();
    const token = randomToken();
    expect(await outcome(gateway.verify(token))).toBe('invalid_token');
    expect(await outcome(gateway.verify(token))).toBe('invalid_token');
    expect(as.calls).toHaveLength(1);
  });
});

describe('D8 the AS refusing the gateway credentials', () => {
  it.each([401, 403])('D8 AS answers %i → auth_unavailable, an operator error log, no secret or token in logs', async (status) => {
    as.respond(() => ({ status, body: '{"error":"invalid_client"}' }));
    const logs = captureLogs();
    const gateway = verifier({}, { logger: logs.logger });
    const token = randomToken();
    expect(await outcome(gateway.verify(token))).toBe('auth_unavailable');
    expect(await cachedEntries()).toEqual([]);

    const errors = logs.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ failure: 'credentials_refused', status });
    const text = logs.text();
    const basic = as.calls[0]?.authorization?.replace(/^Basic /, '') ?? 'unreachable';
    for (const secret of [INTROSPECTION_SECRET, token, basic, Buffer.from(INTROSPECTION_SECRET).toString('base64')]) {
      expect(text).not.toContain(secret);
    }
  });
});

describe('D11 single flight, bulkhead and pre-AS rejection', () => {
  it('D11 100 concurrent requests with one uncached token → 1 AS call', async () => {
    const gate = deferred();
    as.respond(async () => {
      await gate.promise;
      return goodAnswer();
    });
    const gateway = verifier();
    const token = randomToken();
    const requests = Array.from({ length: 100 }, () => Promise.resolve(gateway.verify(token)));
    await as.waitForCalls(1);
    gate.release();
    const results = await Promise.allSettled(requests);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(100);
    expect(as.calls).toHaveLength(1);
  });

  it('D11 a cache read that answers after the first flight landed (a slow or timed-out Redis read) does not ask the AS again', async () => {
    as.respond(() => goodAnswer());
    // The second request's read is held and then answers "miss", as a read issued before the flight's write, or
    // one that timed out, does.
    const heldRead = deferred();
    let reads = 0;
    const slowSecondRead: CacheStore = {
      ...store,
      status: () => store.status(),
      set: (key, value, ttlMs, options) => store.set(key, value, ttlMs, options),
      get: async (key) => {
        reads += 1;
        if (reads !== 2) return store.get(key);
        await heldRead.promise;
        return undefined;
      },
    };
    const gateway = verifier({}, { store: slowSecondRead });
    const token = randomToken();
    const first = gateway.verify(token);
    const second = gateway.verify(token);
    await expect(first).resolves.toMatchObject({ subject: 'alice' });
    heldRead.release();
    await expect(second).resolves.toMatchObject({ subject: 'alice' });
    expect(as.calls).toHaveLength(1);
  });

  it('D11 200 distinct tokens against a slow AS with a bulkhead of 16 → the AS never sees more than 16 at once; a bounded number wait, the rest are shed', async () => {
    const gate = deferred();
    as.respond(async () => {
      await gate.promise;
      return inactive;
    });
    // Waiting for a slot is bounded by the introspection timeout: long here, so only the gate decides.
    const gateway = verifier({ timeout: 60_000 }, { maxConcurrent: 16 });
    let shed = 0;
    const overflowShed = deferred();
    const requests = Array.from({ length: 200 }, () =>
      outcome(gateway.verify(randomToken())).then((code) => {
        if (code === 'auth_unavailable' && (shed += 1) === 120) overflowShed.release();
        return code;
      }),
    );
    // 16 at the AS, 64 (four bulkheads) in the waiting room, 120 refused at once.
    await overflowShed.promise;
    await as.waitForCalls(16);
    gate.release();
    const codes = await Promise.all(requests);
    expect(codes.filter((code) => code === 'invalid_token')).toHaveLength(80);
    expect(codes.filter((code) => code === 'auth_unavailable')).toHaveLength(120);
    expect(as.calls).toHaveLength(80);
    expect(as.maxInFlight).toBeLessThanOrEqual(16);
  });

  it.each([
    ['empty', ''],
    ['a space', 'abc def'],
    ['a quote', 'abc"def'],
    ['a percent sign', 'abc%41'],
    ['a comma', 'abc,def'],
    ['padding in the middle', 'abc=def'],
    ['a control character', 'abc\u0001def'],
    ['longer than 16 KiB', 'a'.repeat(16 * 1024 + 1)],
  ])('D11 a token with %s never reaches the AS → invalid_token', async (_case, token) => {
    as.respond(() => goodAnswer());
    expect(await outcome(verifier().verify(token))).toBe('invalid_token');
    expect(as.calls).toHaveLength(0);
  });
});

describe('K15 a Redis writer cannot graft one caller\'s cached claims onto another token', () => {
  const keyOf = (token: string): string => prefix + introspectionCacheKey(ISSUER, keySecret, token);

  it.each([
    ['a token never seen', false],
    ['a token cached as inactive', true],
  ])('K15 alice\'s entry copied onto the key of %s → refused: re-introspected and 401, never alice', async (_case, cachedFirst) => {
    const alice = randomToken();
    const mallory = randomToken();
    as.respond((call) => (call.token === alice ? goodAnswer() : inactive));
    await verifier().verify(alice);
    if (cachedFirst) expect(await outcome(verifier().verify(mallory))).toBe('invalid_token');
    const callsBefore = as.calls.length;

    const aliceEntry = await raw.get(keyOf(alice));
    expect(aliceEntry).not.toBeNull();
    await raw.set(keyOf(mallory), aliceEntry ?? '', 'PX', 60_000);

    // A fresh verifier (another replica): nothing in its in-process tier, so it reads the grafted entry.
    expect(await outcome(verifier().verify(mallory), { withReason: true })).toBe('invalid_token:introspection_inactive');
    expect(as.calls.slice(callsBefore).map((call) => call.token)).toEqual([mallory]);
    // The genuine entry still opens under its own key.
    await expect(verifier().verify(alice)).resolves.toMatchObject({ subject: 'alice' });
    expect(as.calls.slice(callsBefore)).toHaveLength(1);
  });

  it('K15 an entry sealed under another key secret (another gateway sharing the Redis) reads as a miss', async () => {
    as.respond(() => goodAnswer());
    const token = randomToken();
    await verifier({}, { keySecret: randomBytes(32) }).verify(token);
    const [foreign] = await cachedEntries();
    await raw.set(keyOf(token), foreign?.value ?? '', 'PX', 60_000);
    await verifier().verify(token);
    expect(as.calls).toHaveLength(2);
  });
});

describe('D12 one cached entry, re-evaluated for every route', () => {
  it('D12 entry cached through route A (aud A) presented at route B → invalid_token at B without a new AS call', async () => {
    as.respond(() => goodAnswer({ aud: [RESOURCE] }));
    const routeA = verifier();
    const routeB = verifier({}, { audiences: [OTHER_RESOURCE] });
    const token = randomToken();
    await expect(routeA.verify(token)).resolves.toMatchObject({ audience: [RESOURCE] });
    expect(await outcome(routeB.verify(token))).toBe('invalid_token');
    expect(as.calls).toHaveLength(1);
  });

  it('D12 an entry for both audiences is accepted at both, each seeing its own scopes decision later', async () => {
    as.respond(() => goodAnswer({ aud: [RESOURCE, OTHER_RESOURCE], scope: 'files:read' }));
    const token = randomToken();
    const atA = await verifier().verify(token);
    const atB = await verifier({}, { audiences: [OTHER_RESOURCE] }).verify(token);
    expect([...atA.scopes]).toEqual(['files:read']);
    expect([...atB.scopes]).toEqual(['files:read']);
    expect(as.calls).toHaveLength(1);
  });
});
