import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { introspectionCacheKey } from '../../../src/cache/cache-keys.js';
import { resolveCacheKeySecret } from '../../../src/gateway/cache-store.js';
import { Secret } from '../../../src/config/secret.js';

const TOKEN = 'opaque-TOKEN_0123456789abcdefghijklmnopqrstuvwxyz';
const SECRET = randomBytes(32);

describe('introspection cache key', () => {
  it('is stable for one token, issuer and key secret, and has the documented shape', () => {
    const key = introspectionCacheKey('https://as.example.test', SECRET, TOKEN);
    expect(introspectionCacheKey('https://as.example.test', SECRET, TOKEN)).toBe(key);
    expect(key).toMatch(/^introspect:[0-9a-f]{16}:[A-Za-z0-9_-]{43}$/);
  });

  it('keeps the namespace part it had: the first 16 hex digits of the namespace SHA-256', () => {
    expect(introspectionCacheKey('https://as.example.test', SECRET, TOKEN)).toMatch(/^introspect:855bec0bafdc6f90:/);
  });

  it('D1 contains no fragment of the token (8 characters or more)', () => {
    const key = introspectionCacheKey('https://as.example.test', SECRET, TOKEN);
    for (let start = 0; start + 8 <= TOKEN.length; start += 1) {
      expect(key).not.toContain(TOKEN.slice(start, start + 8));
    }
  });

  it.each([
    ['another token', 'https://as.example.test', SECRET, `${TOKEN}x`],
    ['another issuer', 'https://other-as.example.test', SECRET, TOKEN],
    ['another key secret', 'https://as.example.test', randomBytes(32), TOKEN],
  ])('differs for %s', (_case, namespace, secret, token) => {
    expect(introspectionCacheKey(namespace, secret, token)).not.toBe(
      introspectionCacheKey('https://as.example.test', SECRET, TOKEN),
    );
  });
});

describe('cache key secret', () => {
  it('uses the configured key secret', () => {
    const settings = { redisUrl: undefined, keySecret: new Secret('k'.repeat(32)), keyPrefix: 'p:' };
    expect(resolveCacheKeySecret(settings).equals(Buffer.from('k'.repeat(32)))).toBe(true);
  });

  it('is random per process without Redis', () => {
    const settings = { redisUrl: undefined, keySecret: undefined, keyPrefix: 'p:' };
    const first = resolveCacheKeySecret(settings);
    expect(first).toHaveLength(32);
    expect(first.equals(resolveCacheKeySecret(settings))).toBe(false);
  });

  it('is required with Redis, so replicas share entries', () => {
    const settings = { redisUrl: new Secret('redis://127.0.0.1:6379'), keySecret: undefined, keyPrefix: 'p:' };
    expect(() => resolveCacheKeySecret(settings)).toThrow(/key_secret/);
  });
});
