import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthContext, BindingState } from '../../../src/decision/ports.js';
import { bindingDecision } from '../../../src/decision/steps/session.js';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import { createRedisStore } from '../../../src/cache/redis-store.js';
import { createSeenSessions, createSessionBindings } from '../../../src/session/bindings.js';
import { spawnRedis, startRedis, uniquePrefix, type RedisHandle } from '../../helpers/redis.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../../helpers/redis-timeouts.js';

const SESSION = 'session-canary-5d3e';
const START = 1_800_000_000_000;

function caller(overrides: Partial<AuthContext> = {}): AuthContext {
  return {
    issuer: 'https://as.example.test',
    subject: 'alice',
    clientId: 'client-1',
    scopes: new Set(),
    audience: [],
    expiresAt: START + 3_600_000,
    tokenKind: 'jwt',
    ...overrides,
  };
}

describe('createSessionBindings', () => {
  it.each<[string, Partial<AuthContext>, BindingState]>([
    ['G1 another subject', { subject: 'bob' }, 'foreign'],
    ['G5 the same subject through another client', { clientId: 'client-2' }, 'foreign'],
    ['the same subject from another issuer', { issuer: 'https://other.example.test' }, 'foreign'],
    ['no subject', { subject: undefined }, 'foreign'],
    ['the owner', {}, 'owned'],
  ])('%s → %s', async (_title, who, expected) => {
    const bindings = createSessionBindings('calc', { bind: true, idleTtl: 60_000 }, { store: createMemoryStore(), keySecret: randomBytes(32) });
    expect(await bindings.bind(SESSION, caller())).toBe(true);
    expect(await bindings.check(SESSION, caller(who))).toBe(expected);
  });

  it('an unbound id is unknown; a released one too; routes do not share bindings', async () => {
    const deps = { store: createMemoryStore(), keySecret: randomBytes(32) };
    const calc = createSessionBindings('calc', { bind: true, idleTtl: 60_000 }, deps);
    const files = createSessionBindings('files', { bind: true, idleTtl: 60_000 }, deps);
    expect(await calc.check(SESSION, caller())).toBe('unknown');
    await calc.bind(SESSION, caller());
    expect(await files.check(SESSION, caller())).toBe('unknown');
    await calc.release(SESSION);
    expect(await calc.check(SESSION, caller())).toBe('unknown');
  });

  it('idle TTL: each use starts it again; a binding unused for idle_ttl is gone', async () => {
    let time = START;
    const store = createMemoryStore({ now: () => time });
    const bindings = createSessionBindings('calc', { bind: true, idleTtl: 60_000 }, { store, keySecret: randomBytes(32) });
    await bindings.bind(SESSION, caller());
    time += 59_000;
    expect(await bindings.check(SESSION, caller())).toBe('owned');
    time += 59_000;
    expect(await bindings.check(SESSION, caller())).toBe('owned');
    time += 60_001;
    expect(await bindings.check(SESSION, caller())).toBe('unknown');
  });

  it('G1 a principal object seen before still checks against the stored owner: another principal is foreign', async () => {
    const bindings = createSessionBindings('calc', { bind: true, idleTtl: 60_000 }, { store: createMemoryStore(), keySecret: randomBytes(32) });
    const alice = caller();
    const bob = caller({ subject: 'bob' });
    await bindings.bind(SESSION, alice);
    expect(await bindings.check(SESSION, bob)).toBe('foreign');
    expect(await bindings.check(SESSION, alice)).toBe('owned');
    expect(await bindings.check(SESSION, bob)).toBe('foreign');
    expect(await bindings.check(SESSION, caller())).toBe('owned');
  });

  it('G1 ownership is read from the store on every check: a release by another replica counts at once', async () => {
    const deps = { store: createMemoryStore(), keySecret: randomBytes(32) };
    const settings = { bind: true, idleTtl: 60_000 };
    const [replicaA, replicaB] = [createSessionBindings('calc', settings, deps), createSessionBindings('calc', settings, deps)];
    const alice = caller();
    await replicaA.bind(SESSION, alice);
    expect(await replicaB.check(SESSION, alice)).toBe('owned');
    await replicaA.release(SESSION);
    expect(await replicaB.check(SESSION, alice)).toBe('unknown');
    await replicaA.bind(SESSION, caller({ subject: 'bob' }));
    expect(await replicaB.check(SESSION, alice)).toBe('foreign');
  });

  it.each<[BindingState, string | undefined]>([
    ['owned', undefined],
    ['foreign', 'session_not_found'],
    ['unknown', 'session_not_found'],
    ['unavailable', 'auth_unavailable'],
  ])('bindingDecision(%s) → %s', (state, code) => {
    expect(bindingDecision(state)?.code).toBe(code);
  });
});

describe('session bindings in Redis', () => {
  let redis: RedisHandle;
  let raw: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
  });

  afterAll(async () => {
    raw.disconnect();
    await redis.stop();
  });

  it('G1 across replicas: a binding made by one gateway is enforced by another; nothing readable is stored', async () => {
    const keyPrefix = uniquePrefix('bindings');
    const keySecret = randomBytes(32);
    const [storeA, storeB] = [createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS }), createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS })];
    try {
      expect(await storeA.whenReady(10_000)).toBe(true);
      expect(await storeB.whenReady(10_000)).toBe(true);
      const settings = { bind: true, idleTtl: 60_000 };
      await createSessionBindings('calc', settings, { store: storeA, keySecret }).bind(SESSION, caller());
      const replica = createSessionBindings('calc', settings, { store: storeB, keySecret });
      expect(await replica.check(SESSION, caller({ subject: 'bob' }))).toBe('foreign');
      expect(await replica.check(SESSION, caller())).toBe('owned');

      const keys = await raw.keys(`${keyPrefix}*`);
      expect(keys).toHaveLength(1);
      const ttl = await raw.pttl(keys[0] ?? '');
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
      const dump = `${keys.join()} ${await raw.get(keys[0] ?? '')}`;
      for (const secret of [SESSION, 'alice', 'client-1', 'as.example.test']) expect(dump).not.toContain(secret);
    } finally {
      await Promise.all([storeA.close(), storeB.close()]);
    }
  });

  it('a store that cannot answer is "unavailable", never "unknown" (nobody else gets in)', async () => {
    const spawned = await spawnRedis();
    const store = createRedisStore({ url: spawned.url, keyPrefix: uniquePrefix('bindings-down') });
    try {
      expect(await store.whenReady(10_000)).toBe(true);
      const bindings = createSessionBindings('calc', { bind: true, idleTtl: 60_000 }, { store, keySecret: randomBytes(32) });
      await bindings.bind(SESSION, caller());
      await spawned.kill();
      expect(await bindings.check(SESSION, caller({ subject: 'bob' }))).toBe('unavailable');
    } finally {
      await store.close();
      await spawned.stop();
    }
  });
});

describe('sessions this replica has seen, through a Redis outage', () => {
  const settings = { bind: true, idleTtl: 60_000 };

  type RedisParts = { spawned: Awaited<ReturnType<typeof spawnRedis>>; store: ReturnType<typeof createRedisStore> };

  async function withRedis(test: (parts: RedisParts) => Promise<void>, commandTimeoutMs = TEST_REDIS_COMMAND_TIMEOUT_MS): Promise<void> {
    const spawned = await spawnRedis();
    const store = createRedisStore({ url: spawned.url, keyPrefix: uniquePrefix('bindings-seen'), commandTimeoutMs });
    try {
      expect(await store.whenReady(10_000)).toBe(true);
      await test({ spawned, store });
    } finally {
      await store.close();
      await spawned.stop();
    }
  }

  // A stall is what the command timeout is for: short here, so each check gives up quickly.
  const STALL_COMMAND_TIMEOUT_MS = 200;

  it('a frozen Redis: the owner of a seen session is served, another principal gets 404, an unseen session 503', async () => {
    await withRedis(async ({ spawned, store }) => {
      const bindings = createSessionBindings('calc', settings, { store, keySecret: randomBytes(32), seenSessions: createSeenSessions({ max: 100 }) });
      expect(await bindings.bind(SESSION, caller())).toBe(true);
      spawned.freeze();
      expect(await bindings.check(SESSION, caller())).toBe('owned');
      expect(await bindings.check(SESSION, caller({ subject: 'bob' }))).toBe('foreign');
      expect(await bindings.check(SESSION, caller({ clientId: 'client-2' }))).toBe('foreign');
      expect(await bindings.check('never-seen-session', caller())).toBe('unavailable');
      spawned.thaw();
    }, STALL_COMMAND_TIMEOUT_MS);
  });

  it('a seen session idle for idle_ttl is not served from memory during an outage', async () => {
    await withRedis(async ({ spawned, store }) => {
      let time = START;
      const seenSessions = createSeenSessions({ max: 100, now: () => time });
      const bindings = createSessionBindings('calc', settings, { store, keySecret: randomBytes(32), seenSessions });
      await bindings.bind(SESSION, caller());
      await spawned.kill();
      time += 59_000;
      expect(await bindings.check(SESSION, caller())).toBe('owned');
      // Each use here restarts idle_ttl; unused for idle_ttl, the binding is gone.
      time += 60_001;
      expect(await bindings.check(SESSION, caller())).toBe('unavailable');
    });
  });

  it('released on another replica: refused here too, and not served from memory in a later outage', async () => {
    await withRedis(async ({ spawned, store }) => {
      const keySecret = randomBytes(32);
      const here = createSessionBindings('calc', settings, { store, keySecret, seenSessions: createSeenSessions({ max: 100 }) });
      const elsewhere = createSessionBindings('calc', settings, { store, keySecret });
      await here.bind(SESSION, caller());
      await elsewhere.release(SESSION);
      expect(await here.check(SESSION, caller())).toBe('unknown');
      await spawned.kill();
      expect(await here.check(SESSION, caller())).toBe('unavailable');
    });
  });

  it('Redis decides while it answers: a session rebound to another principal on another replica is theirs here too', async () => {
    await withRedis(async ({ store }) => {
      const keySecret = randomBytes(32);
      const here = createSessionBindings('calc', settings, { store, keySecret, seenSessions: createSeenSessions({ max: 100 }) });
      const elsewhere = createSessionBindings('calc', settings, { store, keySecret });
      await here.bind(SESSION, caller());
      await elsewhere.release(SESSION);
      await elsewhere.bind(SESSION, caller({ subject: 'bob' }));
      expect(await here.check(SESSION, caller())).toBe('foreign');
      expect(await here.check(SESSION, caller({ subject: 'bob' }))).toBe('owned');
    });
  });

  it('released here: forgotten here too, so an outage does not bring it back', async () => {
    await withRedis(async ({ spawned, store }) => {
      const bindings = createSessionBindings('calc', settings, { store, keySecret: randomBytes(32), seenSessions: createSeenSessions({ max: 100 }) });
      await bindings.bind(SESSION, caller());
      await bindings.release(SESSION);
      await spawned.kill();
      expect(await bindings.check(SESSION, caller())).toBe('unavailable');
    });
  });
});
