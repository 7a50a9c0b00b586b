import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/decision/ports.js';
import { createPrincipalSlots } from '../../../src/ratelimit/principal-slots.js';

const caller = (subject: string | undefined, clientId = 'ide'): AuthContext => ({
  issuer: 'https://as.example',
  subject,
  clientId,
  scopes: new Set(),
  audience: [],
  expiresAt: Number.MAX_SAFE_INTEGER,
  tokenKind: 'jwt',
});

describe('createPrincipalSlots (K14)', () => {
  it('counts per principal, refuses at the cap, frees on release', () => {
    const cap = createPrincipalSlots();
    const alice = caller('alice');
    const releases = [cap.acquire(alice, 2), cap.acquire(caller('alice'), 2)];
    expect(releases.every(Boolean)).toBe(true);
    expect(cap.acquire(alice, 2)).toBeUndefined();
    expect(cap.acquire(caller('bob'), 2)).toBeDefined();
    releases[0]?.();
    expect(cap.open(alice)).toBe(1);
    expect(cap.acquire(alice, 2)).toBeDefined();
  });

  it('K14 a user counts once through every client; a client without a subject counts on its own', () => {
    const cap = createPrincipalSlots();
    cap.acquire(caller('alice', 'registered-1'), 2);
    cap.acquire(caller('alice', 'registered-2'), 2);
    expect(cap.acquire(caller('alice', 'registered-3'), 2)).toBeUndefined();
    cap.acquire(caller(undefined, 'ci-bot'), 2);
    cap.acquire(caller(undefined, 'ci-bot'), 2);
    expect(cap.acquire(caller(undefined, 'ci-bot'), 2)).toBeUndefined();
    expect(cap.acquire(caller(undefined, 'other-bot'), 2)).toBeDefined();
    // A subject spelled like a client id is another holder.
    expect(cap.acquire(caller('ci-bot', 'ide'), 2)).toBeDefined();
  });

  it('a release called twice frees one slot only', () => {
    const cap = createPrincipalSlots();
    const bob = caller('bob');
    const release = cap.acquire(bob, 5);
    cap.acquire(bob, 5);
    release?.();
    release?.();
    expect(cap.open(bob)).toBe(1);
  });
});
