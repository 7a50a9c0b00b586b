import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIntrospectionVerifier, LOCAL_TTL_MS } from '../../src/auth/introspection-verifier.js';
import type { TokenVerifier } from '../../src/decision/ports.js';
import { createRedisStore, type RedisStore } from '../../src/cache/redis-store.js';
import {
  active,
  inactive,
  introspectionSettings,
  startIntrospectionServer,
  type TestIntrospectionServer,
} from '../helpers/introspection-server.js';
import { freePort, startSilentServer } from '../helpers/net.js';
import { spawnRedis, uniquePrefix } from '../helpers/redis.js';
import { outcome } from '../helpers/outcome.js';

const RESOURCE = 'https://gw.example.test/calc/mcp';
const READY_WAIT_MS = 10_000;

let as: TestIntrospectionServer;
const cleanups: (() => Promise<unknown>)[] = [];
const token = (): string => randomBytes(24).toString('base64url');

beforeEach(async () => {
  as = await startIntrospectionServer();
  // Active for the good token, inactive for anything else: both decisions must survive a broken Redis.
  as.respond((call) =>
    call.token?.startsWith('good')
      ? active({ iss: 'https://as.example.test', sub: 'alice', aud: [RESOURCE], exp: Math.floor(Date.now() / 1000) + 3600 })
      : inactive,
  );
  cleanups.push(() => as.close());
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function storeAt(url: string, commandTimeoutMs?: number): RedisStore {
  const store = createRedisStore({ url, keyPrefix: uniquePrefix('redis-faults'), commandTimeoutMs });
  cleanups.push(() => store.close());
  return store;
}

function verifierOn(store: RedisStore, now?: () => number): TokenVerifier {
  return createIntrospectionVerifier(introspectionSettings(as.endpoint), {
    store,
    keySecret: randomBytes(32),
    audiences: [RESOURCE],
    now,
  });
}


/** Each decision comes from the AS, unchanged by the broken cache: no fail-open, no 503, no hang. */
async function expectDecidedDirectly(verifier: TokenVerifier): Promise<void> {
  const before = as.calls.length;
  expect(await outcome(verifier.verify(`good${token()}`))).toBe('accepted');
  expect(await outcome(verifier.verify(`bad${token()}`))).toBe('invalid_token');
  expect(as.calls.length - before).toBe(2);
}

describe('D9 Redis broken: requests still decided by direct introspection', () => {
  it('D9 connection refused', async () => {
    const store = storeAt(`redis://127.0.0.1:${await freePort()}`);
    await expectDecidedDirectly(verifierOn(store));
    expect(store.status().state).toBe('unavailable');
  });

  it('D9 a server that accepts and never answers', async () => {
    const silent = await startSilentServer();
    cleanups.push(() => silent.close());
    const store = storeAt(silent.url);
    await expectDecidedDirectly(verifierOn(store));
    expect(store.status().state).not.toBe('ready');
  });

  it('D9 a connected Redis that stops answering (commands time out)', async () => {
    const redis = await spawnRedis();
    cleanups.push(() => redis.stop());
    const store = storeAt(redis.url, 100);
    expect(await store.whenReady(READY_WAIT_MS)).toBe(true);
    redis.freeze();
    await expectDecidedDirectly(verifierOn(store));
    expect(store.status().state).toBe('unavailable');
    redis.thaw();
  });

  it('D9 a read-only replica (failover): entries cannot be written, decisions still made', async () => {
    const redis = await spawnRedis(['--replicaof', '127.0.0.1', String(await freePort())]);
    cleanups.push(() => redis.stop());
    const store = storeAt(redis.url);
    expect(await store.whenReady(READY_WAIT_MS)).toBe(true);
    await expectDecidedDirectly(verifierOn(store));
  });

  it('D9 Redis killed mid-run: a cached token and new tokens are still decided; I12 restarted → caches again', async () => {
    const redis = await spawnRedis();
    cleanups.push(() => redis.stop());
    const store = storeAt(redis.url);
    expect(await store.whenReady(READY_WAIT_MS)).toBe(true);
    let clock = Date.now();
    const verifier = verifierOn(store, () => clock);
    const cachedToken = `good${token()}`;
    await verifier.verify(cachedToken);
    await verifier.verify(cachedToken);
    expect(as.calls).toHaveLength(1);

    await redis.kill();
    // The in-process copy answers for LOCAL_TTL_MS; after that the AS is asked directly.
    expect(await outcome(verifier.verify(cachedToken))).toBe('accepted');
    expect(as.calls).toHaveLength(1);
    clock += LOCAL_TTL_MS;
    expect(await outcome(verifier.verify(cachedToken))).toBe('accepted');
    expect(as.calls).toHaveLength(2);
    await expectDecidedDirectly(verifier);

    await redis.restart();
    expect(await store.whenReady(READY_WAIT_MS)).toBe(true);
    const fresh = `good${token()}`;
    await verifier.verify(fresh);
    const calls = as.calls.length;
    await verifier.verify(fresh);
    expect(as.calls).toHaveLength(calls);
    expect(store.status()).toEqual({ backend: 'redis', state: 'ready', connectedOnce: true });
  });
});
