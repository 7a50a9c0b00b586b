import { describe, expect, it } from 'vitest';
import { principalOf } from '../../../src/auth/principal.js';
import type { AuthContext } from '../../../src/decision/ports.js';

function caller(overrides: Partial<AuthContext> = {}): AuthContext {
  return { issuer: 'https://as.example.test', subject: 'alice', clientId: 'app', scopes: new Set(), audience: [], expiresAt: 0, tokenKind: 'jwt', ...overrides };
}

describe('principalOf', () => {
  it('G5 issuer, subject and client id; missing ones count as empty', () => {
    expect(principalOf(caller())).toEqual(['https://as.example.test', 'alice', 'app']);
    expect(principalOf(caller({ subject: undefined, clientId: undefined }))).toEqual(['https://as.example.test', '', '']);
  });
});
