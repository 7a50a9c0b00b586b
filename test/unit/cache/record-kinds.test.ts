import { describe, expect, it } from 'vitest';
import { recordKindOf } from '../../../src/cache/cache-keys.js';
import { RECORD_KINDS } from '../../../src/cache/record-kinds.js';
import { MEMORY_RECORD_KINDS } from '../../../src/config/memory-bounds.js';

describe('record kinds of the in-process store', () => {
  it('the configuration has a bound (cache.memory.<kind>) for exactly the kinds the store keeps apart', () => {
    expect(Object.keys(MEMORY_RECORD_KINDS).sort()).toEqual([...RECORD_KINDS].sort());
  });

  it('every kind but the negative introspection answers is the kind of some key class', () => {
    const classes = ['introspect', 'session', 'ratelimit', 'upstream-token', 'grant', 'grant-refresh', 'grant-epoch', 'consent-link', 'consent-link-of', 'consent-flow', 'dpop-jti'];
    const kinds = new Set(classes.map((keyClass) => recordKindOf(`${keyClass}:x`)));
    expect([...kinds].sort()).toEqual(RECORD_KINDS.filter((kind) => kind !== 'introspection_negative').sort());
  });
});
