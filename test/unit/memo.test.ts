import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../src/auth/types.js';
import { perObject } from '../../src/memo.js';

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
