import { describe, expect, it } from 'vitest';
import { consentableScopes, entitledScopes } from '../../../src/authserver/entitlements.js';
import type { Entitlement } from '../../../src/config/types.js';

const ENTITLEMENTS: Entitlement[] = [
  { scopes: ['mcp:tools'], when: undefined },
  { scopes: ['calc:write'], when: { claim: 'groups', includes: 'calc-admins' } },
  { scopes: ['notes:read'], when: { claim: 'email_verified', equals: true } },
];

describe('entitledScopes', () => {
  it('gives everyone the unconditional scopes', () => {
    expect(entitledScopes(ENTITLEMENTS, { sub: 'alice' })).toEqual(['mcp:tools']);
  });

  it('adds the scopes of a group the groups claim lists', () => {
    expect(entitledScopes(ENTITLEMENTS, { groups: ['staff', 'calc-admins'] })).toEqual(['mcp:tools', 'calc:write']);
  });

  it('takes a single-valued claim for a one-element list', () => {
    expect(entitledScopes(ENTITLEMENTS, { groups: 'calc-admins' })).toContain('calc:write');
  });

  it('compares equals exactly, type included', () => {
    expect(entitledScopes(ENTITLEMENTS, { email_verified: 'true' })).not.toContain('notes:read');
    expect(entitledScopes(ENTITLEMENTS, { email_verified: true })).toContain('notes:read');
  });

  it('never matches a group by substring', () => {
    expect(entitledScopes(ENTITLEMENTS, { groups: ['calc-admins-former'] })).toEqual(['mcp:tools']);
  });
});

describe('consentableScopes', () => {
  it('is the route scopes the person is entitled to, in route order', () => {
    expect(consentableScopes(['mcp:tools', 'calc:write', 'calc:admin'], ['calc:write', 'mcp:tools', 'other'])).toEqual([
      'mcp:tools',
      'calc:write',
    ]);
  });
});
