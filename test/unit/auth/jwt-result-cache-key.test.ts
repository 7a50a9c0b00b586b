import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resultCacheKey } from '../../../src/auth/jwt-verifier.js';

describe('JWT result cache key', () => {
  it('is the base64url SHA-256 of the token (known vector)', () => {
    expect(resultCacheKey('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  });

  it.each([
    ['a compact JWS', 'eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJodHRwczovL2kifQ.c2ln'],
    ['non-ASCII text', 'tökén-✓'],
    ['empty', ''],
  ])('is the key the Hash-object form gave for %s', (_case, token) => {
    expect(resultCacheKey(token)).toBe(createHash('sha256').update(token).digest('base64url'));
  });
});
