import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import { createRedisStore, type RedisStore } from '../../../src/cache/redis-store.js';
import { createConsentLinks, type IssuedLink } from '../../../src/grants/links.js';
import { startRedis, uniquePrefix, type RedisHandle } from '../../helpers/redis.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../../helpers/redis-timeouts.js';

const KEY_SECRET = Buffer.from('consent-links-key-secret-0123456789abcdef');
const TTL_MS = 600_000;
const START = 1_800_000_000_000;
const ALICE = { route: 'notes', issuer: 'https://as.example.com', subject: 'alice', clientId: 'client-1' };
const PUBLIC_URL = 'https://gw.example.com';

function linkValue(issued: IssuedLink | undefined): string {
  return new URL(issued?.url ?? 'https://invalid.example').searchParams.get('link') ?? '';
}

function clockAt(start: number): { now: () => number; advance(ms: number): void } {
  let time = start;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

describe('consent links: one live link per person and route', () => {
  it('3,000 requests of one signed-in caller without a grant leave one link record, and every answer is that link', async () => {
    const store = createMemoryStore();
    const links = createConsentLinks(store, KEY_SECRET, { publicUrl: PUBLIC_URL, ttlMs: TTL_MS });
    const issued = new Set<string>();
    for (let index = 0; index < 3_000; index += 1) issued.add(linkValue(await links.issue(ALICE)));
    expect(issued.size).toBe(1);
    expect(await store.scan('consent-link:', 10_000)).toHaveLength(1);
  });

  it('concurrent requests of one caller hand out one link', async () => {
    const store = createMemoryStore();
    const links = createConsentLinks(store, KEY_SECRET, { publicUrl: PUBLIC_URL, ttlMs: TTL_MS });
    const issued = await Promise.all(Array.from({ length: 50 }, () => links.issue(ALICE)));
    expect(new Set(issued.map(linkValue)).size).toBe(1);
    expect(await store.scan('consent-link:', 10_000)).toHaveLength(1);
  });

  it('another person, route or client gets its own link; alternating clients never pile up records', async () => {
    const store = createMemoryStore();
    const links = createConsentLinks(store, KEY_SECRET, { publicUrl: PUBLIC_URL, ttlMs: TTL_MS });
    const alice = linkValue(await links.issue(ALICE));
    expect(linkValue(await links.issue({ ...ALICE, subject: 'bob' }))).not.toBe(alice);
    expect(linkValue(await links.issue({ ...ALICE, route: 'files' }))).not.toBe(alice);
    for (let index = 0; index < 100; index += 1) await links.issue({ ...ALICE, clientId: `client-${index % 2}` });
    // alice on notes (one, whichever client asked last), bob on notes, alice on files.
    expect(await store.scan('consent-link:', 10_000)).toHaveLength(3);
    const latest = await links.issue({ ...ALICE, clientId: 'client-1' });
    expect(await links.redeem(linkValue(latest))).toMatchObject({ kind: 'found', value: { subject: 'alice', clientId: 'client-1' } });
  });

  it('an opened link is not handed out again; the next request gets a new one', async () => {
    const links = createConsentLinks(createMemoryStore(), KEY_SECRET, { publicUrl: PUBLIC_URL, ttlMs: TTL_MS });
    const first = await links.issue(ALICE);
    expect(await links.redeem(linkValue(first))).toMatchObject({ kind: 'found', value: { subject: 'alice', elicitationId: first?.elicitationId } });
    const second = await links.issue(ALICE);
    expect(linkValue(second)).not.toBe(linkValue(first));
    expect(await links.redeem(linkValue(first))).toEqual({ kind: 'absent' });
    expect(await links.redeem(linkValue(second))).toMatchObject({ kind: 'found' });
  });

  it('a link past half its life is replaced, and the replaced one no longer opens', async () => {
    const clock = clockAt(START);
    const store = createMemoryStore({ now: clock.now });
    const links = createConsentLinks(store, KEY_SECRET, { publicUrl: PUBLIC_URL, ttlMs: TTL_MS, now: clock.now });
    const first = await links.issue(ALICE);
    clock.advance(TTL_MS / 2 - 1);
    expect(linkValue(await links.issue(ALICE))).toBe(linkValue(first));
    clock.advance(2);
    const second = await links.issue(ALICE);
    expect(linkValue(second)).not.toBe(linkValue(first));
    expect(await links.redeem(linkValue(first))).toEqual({ kind: 'absent' });
    expect(await store.scan('consent-link:', 10_000)).toHaveLength(1);
  });
});

describe('consent links in Redis', () => {
  let redis: RedisHandle;
  let raw: Redis;
  let store: RedisStore;
  let prefix: string;

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    prefix = uniquePrefix('consent-links');
    store = createRedisStore({ url: redis.url, keyPrefix: prefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
    expect(await store.whenReady(10_000)).toBe(true);
  });

  afterAll(async () => {
    await store.close();
    raw.disconnect();
    await redis.stop();
  });

  it('the link handed out again is stored sealed: no key or value holds it, the person or the route', async () => {
    const links = createConsentLinks(store, KEY_SECRET, { publicUrl: PUBLIC_URL, ttlMs: TTL_MS });
    const issued = await Promise.all(Array.from({ length: 20 }, () => links.issue(ALICE)));
    const link = linkValue(issued[0]);
    expect(new Set(issued.map(linkValue))).toEqual(new Set([link]));
    const keys = await raw.keys(`${prefix}*`);
    expect(keys).toHaveLength(2);
    const dump = [...keys, ...(await Promise.all(keys.map((key) => raw.get(key))))].join(' ');
    for (const readable of [link, 'alice', 'notes', 'client-1', 'as.example.com']) expect(dump).not.toContain(readable);
  });
});
