import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/decision/ports.js';
import { perConnection, perObject } from '../../../src/lib/memo.js';

function caller(overrides: Partial<AuthContext> = {}): AuthContext {
  return { issuer: 'https://as.example.test', subject: 'alice', clientId: 'app', scopes: new Set(), audience: [], expiresAt: 0, tokenKind: 'jwt', ...overrides };
}

describe('perObject', () => {
  it('computes once per context object, and again for another object with equal contents', () => {
    const computed: AuthContext[] = [];
    const digest = perObject((auth: AuthContext) => (computed.push(auth), `digest:${auth.subject ?? ''}`));
    const alice = caller();
    expect([digest(alice), digest(alice), digest(alice)]).toEqual(['digest:alice', 'digest:alice', 'digest:alice']);
    expect(computed).toEqual([alice]);
    const twin = caller();
    expect(digest(twin)).toBe('digest:alice');
    expect(computed).toHaveLength(2);
    expect(digest(caller({ subject: 'bob' }))).toBe('digest:bob');
  });
});

describe('perConnection', () => {
  function counted() {
    const hashed: string[] = [];
    return { hashed, keyOf: perConnection((token) => (hashed.push(token), `key:${token}`)) };
  }

  it('hashes a token once per connection that keeps sending it', () => {
    const { hashed, keyOf } = counted();
    const connection = {};
    expect([keyOf('tokenA', connection), keyOf('tokenA', connection), keyOf('tokenA', connection)]).toEqual(['key:tokenA', 'key:tokenA', 'key:tokenA']);
    expect(hashed).toEqual(['tokenA']);
  });

  it('another token on the same connection gets its own key, never the remembered one (no confusion)', () => {
    const { hashed, keyOf } = counted();
    const connection = {};
    keyOf('tokenA', connection);
    // Neighbours of the remembered token: a prefix, an extension, one character changed.
    for (const other of ['token', 'tokenAB', 'tokenB', 'TOKENA']) expect(keyOf(other, connection)).toBe(`key:${other}`);
    expect(hashed).toEqual(['tokenA', 'token', 'tokenAB', 'tokenB', 'TOKENA']);
  });

  it('shares nothing across connections, and without a connection always hashes', () => {
    const { hashed, keyOf } = counted();
    keyOf('tokenA', {});
    keyOf('tokenA', {});
    keyOf('tokenA', undefined);
    keyOf('tokenA', undefined);
    expect(hashed).toHaveLength(4);
  });
});
