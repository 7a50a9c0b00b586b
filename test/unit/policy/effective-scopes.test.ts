import { describe, expect, it } from 'vitest';
import { effectiveScopes, grantsAll } from '../../../src/policy/scopes.js';
import { impliedScopes } from '../../../src/config/compile.js';

describe('effectiveScopes (policy.implies)', () => {
  const implies = impliedScopes({ 'calc:admin': ['calc:write'], 'calc:write': ['calc:read'], loop: ['calc:admin'] });

  it.each<[string, string[], string[]]>([
    ['no implication', ['mcp:tools'], ['mcp:tools']],
    ['direct and transitive', ['calc:admin'], ['calc:admin', 'calc:write', 'calc:read']],
    ['through a chain ending in a cycle', ['loop'], ['loop', 'calc:admin', 'calc:write', 'calc:read']],
    ['nothing implied upwards', ['calc:read'], ['calc:read']],
  ])('%s', (_title, granted, expected) => {
    expect([...effectiveScopes(new Set(granted), implies)].sort()).toEqual([...expected].sort());
  });

  it('returns the granted set itself when the route has no implies', () => {
    const granted = new Set(['a']);
    expect(effectiveScopes(granted, new Map())).toBe(granted);
  });

  it('a missing-scope check passes through implies but still names the scope itself', () => {
    const effective = effectiveScopes(new Set(['calc:admin']), implies);
    expect(grantsAll(['calc:write'], effective)).toBe(true);
    expect(grantsAll(['calc:write', 'files:read'], effective)).toBe(false);
  });
});
