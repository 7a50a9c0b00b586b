import { describe, expect, it } from 'vitest';
import { missingScopes, parseScopeClaim } from '../../../src/auth/scopes.js';

describe('parseScopeClaim', () => {
  it.each<[unknown, string[] | undefined]>([
    ['files:read files:write', ['files:read', 'files:write']],
    ['files:read', ['files:read']],
    ['  a   b ', ['a', 'b']],
    ['', []],
    [['files:read', 'files:write'], ['files:read', 'files:write']],
    [[], []],
    [undefined, undefined],
    [null, undefined],
    [42, undefined],
    [{ files: true }, undefined],
    [['files:read', 7], undefined],
  ])('C15 %j → %j', (claim, expected) => {
    const parsed = parseScopeClaim(claim);
    expect(parsed === undefined ? undefined : [...parsed]).toEqual(expected);
  });
});

describe('missingScopes', () => {
  const granted = parseScopeClaim('files:write-extra files:* FILES:WRITE files:read') ?? new Set<string>();

  it.each([['files:write'], ['files']])('C15 %s is not satisfied by prefix, wildcard or case variants', (required) => {
    expect(missingScopes([required], granted)).toEqual([required]);
  });

  it('C15 an exact token satisfies, comparison is case-sensitive', () => {
    expect(missingScopes(['files:read'], granted)).toEqual([]);
    expect(missingScopes(['FILES:READ'], granted)).toEqual(['FILES:READ']);
  });

  it('C15 a JSON-array-looking scope string is one opaque token, not a list', () => {
    const fromString = parseScopeClaim('["files:read"]') ?? new Set<string>();
    expect(missingScopes(['files:read'], fromString)).toEqual(['files:read']);
  });

  it('returns missing scopes in required order without duplicates', () => {
    expect(missingScopes(['c', 'files:read', 'a', 'c'], granted)).toEqual(['c', 'a']);
  });
});
