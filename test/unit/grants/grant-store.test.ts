import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantEpochKey, userGrantKey } from '../../../src/cache/cache-keys.js';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import { createRedisStore, type RedisStore } from '../../../src/cache/redis-store.js';
import { createGrantStore, type UserGrant } from '../../../src/grants/grant-store.js';
import { startRedis, uniquePrefix, type RedisHandle } from '../../helpers/redis.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../../helpers/redis-timeouts.js';

const KEY_SECRET = Buffer.from('grant-store-key-secret-0123456789abcdef');
const ALICE = { issuer: 'https://as.example.com', subject: 'alice' };
const BOB = { issuer: 'https://as.example.com', subject: 'bob' };

function grant(principal: typeof ALICE, route: string, accessToken: string): UserGrant {
  return { ...principal, route, accessToken, refreshToken: `${accessToken}-refresh`, scopes: ['notes:read'], grantedAt: 1, issuedAt: 1 };
}

describe('grant store', () => {
  it('keeps a grant per principal and route, sealed: the stored value and key name neither', async () => {
    const store = createMemoryStore();
    const grants = createGrantStore(store, KEY_SECRET);
    expect(await grants.save(grant(ALICE, 'notes', 'alice-token-canary'), 60_000)).toBe(true);
    expect(await grants.get(ALICE, 'notes')).toEqual({ kind: 'found', value: { ...grant(ALICE, 'notes', 'alice-token-canary'), epoch: expect.any(String) as string } });
    expect(await grants.get(BOB, 'notes')).toEqual({ kind: 'absent' });
    expect(await grants.get(ALICE, 'files')).toEqual({ kind: 'absent' });
    const [key] = (await store.scan('grant:', 10)) ?? [];
    const sealed = await store.get(key ?? '');
    for (const text of [key, sealed]) {
      for (const readable of ['alice', 'notes', 'alice-token-canary', '{']) expect(text).not.toContain(readable);
    }
  });

  it('K15 a grant copied onto another principal\'s key does not open: that principal has none', async () => {
    const store = createMemoryStore();
    const grants = createGrantStore(store, KEY_SECRET);
    await grants.save(grant(ALICE, 'notes', 'alice-token'), 60_000);
    const sealed = await store.get(userGrantKey(KEY_SECRET, 'notes', ALICE.issuer, ALICE.subject));
    await store.set(userGrantKey(KEY_SECRET, 'notes', BOB.issuer, BOB.subject), sealed ?? '', 60_000);
    expect(await grants.get(BOB, 'notes')).toEqual({ kind: 'absent' });
  });

  it('another key secret opens nothing', async () => {
    const store = createMemoryStore();
    await createGrantStore(store, KEY_SECRET).save(grant(ALICE, 'notes', 'alice-token'), 60_000);
    expect(await createGrantStore(store, Buffer.from('another-key-secret-0123456789abcdef0')).get(ALICE, 'notes')).toEqual({ kind: 'absent' });
  });

  it('lists by route; removes; the principal digest is stable and reveals nothing', async () => {
    const grants = createGrantStore(createMemoryStore(), KEY_SECRET);
    await grants.save(grant(ALICE, 'notes', 'a'), 60_000);
    await grants.save(grant(BOB, 'notes', 'b'), 60_000);
    await grants.save(grant(ALICE, 'files', 'c'), 60_000);
    expect((await grants.list(['notes']))?.map((listed) => listed.subject).sort()).toEqual(['alice', 'bob']);
    expect((await grants.list(['notes', 'files']))?.length).toBe(3);
    expect(await grants.remove(BOB, 'notes')).toBe(true);
    expect((await grants.list(['notes']))?.map((listed) => listed.subject)).toEqual(['alice']);
    expect(grants.digest(ALICE)).toBe(grants.digest({ ...ALICE }));
    expect(grants.digest(ALICE)).not.toBe(grants.digest(BOB));
    expect(grants.digest(ALICE)).not.toContain('alice');
  });

  it('one refresh lock per grant', async () => {
    const grants = createGrantStore(createMemoryStore(), KEY_SECRET);
    const lock = await grants.lockRefresh(ALICE, 'notes', 1_000);
    expect(lock).toBeDefined();
    expect(await grants.lockRefresh(ALICE, 'notes', 1_000)).toBeUndefined();
    expect(await grants.lockRefresh(BOB, 'notes', 1_000)).toBeDefined();
    await lock?.release();
    expect(await grants.lockRefresh(ALICE, 'notes', 1_000)).toBeDefined();
  });

  it('a refresh lock that expired and was taken by another replica is not released by its first holder', async () => {
    let now = 1_000_000;
    const grants = createGrantStore(createMemoryStore({ now: () => now }), KEY_SECRET);
    const first = await grants.lockRefresh(ALICE, 'notes', 1_000);
    now += 1_001;
    const second = await grants.lockRefresh(ALICE, 'notes', 1_000);
    expect(second).toBeDefined();
    await first?.release();
    expect(await grants.lockRefresh(ALICE, 'notes', 1_000)).toBeUndefined();
    await second?.release();
    expect(await grants.lockRefresh(ALICE, 'notes', 1_000)).toBeDefined();
  });
});

describe('a revoked grant stays revoked (real Redis)', () => {
  let redis: RedisHandle;
  let store: RedisStore;

  beforeAll(async () => {
    redis = await startRedis();
    store = createRedisStore({ url: redis.url, keyPrefix: uniquePrefix('grant-epochs'), commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
    expect(await store.whenReady(10_000)).toBe(true);
  });

  afterAll(async () => {
    await store.close();
    await redis.stop();
  });

  const grantKey = (route: string) => userGrantKey(KEY_SECRET, route, ALICE.issuer, ALICE.subject);

  it('a Redis writer restoring the saved grant value after Disconnect gets nothing that opens', async () => {
    const grants = createGrantStore(store, KEY_SECRET);
    await grants.save(grant(ALICE, 'restore', 'alice-token'), 60_000);
    const saved = await store.get(grantKey('restore'));
    expect(saved).toBeDefined();
    expect(await grants.revoke(ALICE, 'restore')).toBe(true);
    await store.set(grantKey('restore'), saved ?? '', 60_000);
    expect(await grants.get(ALICE, 'restore')).toEqual({ kind: 'absent' });
    expect(await grants.list(['restore'])).toEqual([]);
    // Nor after the person connects again: the old value names an epoch that never comes back.
    await grants.save(grant(ALICE, 'restore', 'alice-new-token'), 60_000);
    const renewed = await store.get(grantKey('restore'));
    await store.set(grantKey('restore'), saved ?? '', 60_000);
    expect(await grants.get(ALICE, 'restore')).toEqual({ kind: 'absent' });
    await store.set(grantKey('restore'), renewed ?? '', 60_000);
    expect(await grants.get(ALICE, 'restore')).toMatchObject({ kind: 'found', value: { accessToken: 'alice-new-token' } });
  });

  it('a refresh that finishes after Disconnect saves a grant that does not open', async () => {
    const grants = createGrantStore(store, KEY_SECRET);
    await grants.save(grant(ALICE, 'racing', 'alice-token'), 60_000);
    const read = await grants.get(ALICE, 'racing');
    expect(read.kind).toBe('found');
    await grants.revoke(ALICE, 'racing');
    const refreshed = { ...(read.kind === 'found' ? read.value : grant(ALICE, 'racing', '')), accessToken: 'alice-refreshed-token' };
    expect(await grants.save(refreshed, 60_000)).toBe(false);
    expect(await grants.get(ALICE, 'racing')).toEqual({ kind: 'absent' });
  });

  it('the epoch lives as long as the grant: each save extends it, no key or value names the person', async () => {
    const grants = createGrantStore(store, KEY_SECRET);
    await grants.save(grant(ALICE, 'epoch-ttl', 'alice-token'), 1_000);
    await grants.save(grant(ALICE, 'epoch-ttl', 'alice-token-2'), 60_000);
    const epochKey = grantEpochKey(KEY_SECRET, 'epoch-ttl', ALICE.issuer, ALICE.subject);
    const raw = new Redis(redis.url);
    try {
      const [prefixed] = await raw.keys(`*${epochKey}`);
      expect(await raw.pttl(prefixed ?? '')).toBeGreaterThan(1_000);
      expect(`${prefixed} ${await raw.get(prefixed ?? '')}`).not.toMatch(/alice|epoch-ttl|as\.example/);
    } finally {
      raw.disconnect();
    }
  });
});

