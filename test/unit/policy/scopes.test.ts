import { describe, expect, it } from 'vitest';
import { grantsAll, parseScopeClaim } from '../../../src/policy/scopes.js';

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

describe('grantsAll', () => {
  const granted = parseScopeClaim('files:write-extra files:* FILES:WRITE files:read') ?? new Set<string>();

  it.each([['files:write'], ['files']])('C15 %s is not satisfied by prefix, wildcard or case variants', (required) => {
    expect(grantsAll([required], granted)).toBe(false);
  });

  it('C15 an exact token satisfies, comparison is case-sensitive', () => {
    expect(grantsAll(['files:read'], granted)).toBe(true);
    expect(grantsAll(['FILES:READ'], granted)).toBe(false);
  });

  it('C15 a JSON-array-looking scope string is one opaque token, not a list', () => {
    const fromString = parseScopeClaim('["files:read"]') ?? new Set<string>();
    expect(grantsAll(['files:read'], fromString)).toBe(false);
  });

  it('every required scope must be held, however many are required', () => {
    expect(grantsAll([], granted)).toBe(true);
    expect(grantsAll(['files:read', 'files:read'], granted)).toBe(true);
    expect(grantsAll(['files:read', 'c'], granted)).toBe(false);
  });
});
