import { describe, expect, it } from 'vitest';
import { createValueSealer } from '../../../src/cache/sealed-value.js';
import { createSignInSealer, type SignIn } from '../../../src/grants/sign-in.js';

const KEY_SECRET = Buffer.from('sign-in-key-secret-0123456789abcdef012');
const SIGN_IN: SignIn = {
  expiresAt: 1_700_000_600_000,
  state: 's'.repeat(43),
  nonce: 'n'.repeat(43),
  codeVerifier: 'pkce-verifier-canary',
  connection: { route: 'notes', principal: { issuer: 'https://as.example.com', subject: 'alice' }, clientId: 'client-x', elicitationId: 'e-1' },
};

describe('sealed sign-in (the flow cookie before the callback)', () => {
  it('opens to what was sealed; the cookie value reveals none of it', () => {
    const sealer = createSignInSealer(KEY_SECRET);
    const sealed = sealer.seal(SIGN_IN);
    expect(sealed).toMatch(/^[\w-]+$/);
    for (const readable of ['alice', 'notes', 'pkce-verifier-canary', 'client-x', SIGN_IN.state, '{']) expect(sealed).not.toContain(readable);
    expect(sealer.open(sealed)).toEqual(SIGN_IN);
  });

  it('a changed value, another key secret, a flow id or a value sealed for another purpose does not open', () => {
    const sealer = createSignInSealer(KEY_SECRET);
    const sealed = sealer.seal(SIGN_IN);
    const flipped = Buffer.from(sealed, 'base64url');
    flipped[flipped.length - 1] = (flipped.at(-1) ?? 0) ^ 1;
    expect(sealer.open(flipped.toString('base64url'))).toBeUndefined();
    expect(createSignInSealer(Buffer.from('another-key-secret-0123456789abcdef0')).open(sealed)).toBeUndefined();
    expect(sealer.open('f'.repeat(43))).toBeUndefined();
    const otherPurpose = createValueSealer(KEY_SECRET, 'consent flow').seal('consent sign-in', JSON.stringify(SIGN_IN));
    expect(sealer.open(otherPurpose)).toBeUndefined();
  });
});
