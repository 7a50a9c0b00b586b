import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/decision/ports.js';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import type { CacheStore } from '../../../src/cache/store.js';
import { isGatewayError } from '../../../src/decision/refusal.js';
import { createRateLimiter } from '../../../src/ratelimit/limiter.js';
import { outcome } from '../../helpers/outcome.js';

const START = 1_800_000_000_000;

function caller(subject: string, clientId = 'client-1'): AuthContext {
  return { issuer: 'https://as.example.test', subject, clientId, scopes: new Set(), audience: [], expiresAt: START + 60_000, tokenKind: 'jwt' };
}

describe('createRateLimiter', () => {
  it('limits each principal separately; the refusal carries how long to wait', async () => {
    let time = START;
    const limiter = createRateLimiter('calc', { requests: 2, per: 60_000 }, { store: createMemoryStore(), keySecret: randomBytes(32), now: () => time });
    expect(await outcome(limiter.take(caller('alice')))).toBe('accepted');
    expect(await outcome(limiter.take(caller('alice')))).toBe('accepted');
    const refused = await limiter.take(caller('alice')).catch((error: unknown) => error);
    expect(isGatewayError(refused) && [refused.code, refused.retryAfterMs]).toEqual(['rate_limited', 30_000]);
    expect(await outcome(limiter.take(caller('bob')))).toBe('accepted');
    expect(await outcome(limiter.take(caller('alice', 'client-2')))).toBe('accepted');
    time += 30_000;
    expect(await outcome(limiter.take(caller('alice')))).toBe('accepted');
  });

  it('routes have separate buckets', async () => {
    const deps = { store: createMemoryStore(), keySecret: randomBytes(32), now: () => START };
    const calc = createRateLimiter('calc', { requests: 1, per: 60_000 }, deps);
    const files = createRateLimiter('files', { requests: 1, per: 60_000 }, deps);
    expect(await outcome(calc.take(caller('alice')))).toBe('accepted');
    expect(await outcome(files.take(caller('alice')))).toBe('accepted');
    expect(await outcome(calc.take(caller('alice')))).toBe('rate_limited');
  });

  it('fails open when the store cannot answer', async () => {
    const broken: CacheStore = { ...createMemoryStore(), takeToken: () => Promise.resolve(undefined) };
    const limiter = createRateLimiter('calc', { requests: 1, per: 60_000 }, { store: broken, keySecret: randomBytes(32) });
    for (let i = 0; i < 3; i++) expect(await outcome(limiter.take(caller('alice')))).toBe('accepted');
  });
});
