import { describe, expect, it } from 'vitest';
import { dpopNonceSecret, dpopSigningAlgorithms } from '../../../src/authserver/dpop.js';
import type { DpopAlgorithm, DpopMode } from '../../../src/config/types.js';

const route = (mode: DpopMode, algorithms: DpopAlgorithm[]) => ({ dpop: { mode, algorithms, iatWindow: 60_000, requireNonce: false, nonceLifetime: 300_000 } });

describe('dpopSigningAlgorithms', () => {
  it('is empty when every route is bearer_only: the server issues Bearer tokens whatever the client sends', () => {
    expect(dpopSigningAlgorithms([route('bearer_only', ['ES256'])])).toEqual([]);
  });

  it("is the union of the algorithms of routes that take DPoP, in the allow-list's order, bearer_only routes left out", () => {
    expect(
      dpopSigningAlgorithms([route('required', ['EdDSA', 'ES256']), route('accepted', ['PS256', 'ES256']), route('bearer_only', ['RS512'])]),
    ).toEqual(['ES256', 'PS256', 'EdDSA']);
  });
});

describe('dpopNonceSecret', () => {
  it('is 32 bytes, the same for the same key secret (every replica) and different for another', () => {
    const secret = Buffer.alloc(32, 7);
    expect(dpopNonceSecret(secret)).toHaveLength(32);
    expect(dpopNonceSecret(secret).equals(dpopNonceSecret(Buffer.alloc(32, 7)))).toBe(true);
    expect(dpopNonceSecret(secret).equals(dpopNonceSecret(Buffer.alloc(32, 8)))).toBe(false);
  });
});
