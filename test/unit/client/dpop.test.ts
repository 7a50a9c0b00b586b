import { hash } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { boundKeyOf, challengeTakesDpop, createDpopSigner, takesDpop } from '../../../src/client/dpop.js';
import { parseWwwAuthenticate } from '../../../src/client/www-authenticate.js';

function challenge(header: string) {
  const parsed = parseWwwAuthenticate(header);
  if (!parsed.ok) throw new Error('unparsable');
  return parsed.challenges.find((found) => found.scheme === 'DPoP');
}

describe('when login asks for DPoP-bound tokens', () => {
  it('metadata lists ES256 in dpop_signing_alg_values_supported', () => {
    expect(takesDpop({ dpop_signing_alg_values_supported: ['ES256', 'PS256'] })).toBe(true);
    expect(takesDpop({ dpop_signing_alg_values_supported: ['PS256'] })).toBe(false);
    expect(takesDpop({})).toBe(false);
    expect(takesDpop(undefined)).toBe(false);
  });

  it('a DPoP challenge without algs, or with ES256 among them; none, or one without ES256, is no', () => {
    expect(challengeTakesDpop(challenge('DPoP resource_metadata="https://x/prm"'))).toBe(true);
    expect(challengeTakesDpop(challenge('Bearer resource_metadata="https://x/prm", DPoP algs="PS256 ES256"'))).toBe(true);
    expect(challengeTakesDpop(challenge('DPoP algs="PS256"'))).toBe(false);
    expect(challengeTakesDpop(undefined)).toBe(false);
  });
});

describe('createDpopSigner', () => {
  it('signs proofs of RFC 9449 §4.2: typ, ES256, public jwk only, htm, htu without query, ath, a new jti each', async () => {
    const signer = await createDpopSigner();
    const first = await signer.proof('POST', 'https://gw.example/calc/mcp?x=1#y', 'token-1');
    const second = await signer.proof('POST', 'https://gw.example/calc/mcp', 'token-1');
    const header = decodeProtectedHeader(first);
    expect(header).toMatchObject({ typ: 'dpop+jwt', alg: 'ES256' });
    expect(header.jwk).not.toHaveProperty('d');
    expect(await calculateJwkThumbprint(header.jwk as JWK)).toBe(await signer.thumbprint());
    const claims = decodeJwt(first);
    expect(claims).toMatchObject({ htm: 'POST', htu: 'https://gw.example/calc/mcp', ath: hash('sha256', 'token-1', 'base64url') });
    expect(claims.jti).not.toBe(decodeJwt(second).jti);
  });

  it('uses the nonce a server named, for that server only, and says when it is new', async () => {
    const signer = await createDpopSigner();
    const answer = new Response(null, { status: 401, headers: { 'dpop-nonce': 'n-1' } });
    expect(signer.remember('https://gw.example/calc/mcp', answer)).toBe(true);
    expect(signer.remember('https://gw.example/other', answer)).toBe(false);
    expect(decodeJwt(await signer.proof('POST', 'https://gw.example/calc/mcp')).nonce).toBe('n-1');
    expect(decodeJwt(await signer.proof('POST', 'https://as.example/token')).nonce).toBeUndefined();
  });

  it('a stored key signs as the same key', async () => {
    const signer = await createDpopSigner();
    expect(await (await createDpopSigner(signer.privateJwk)).thumbprint()).toBe(await signer.thumbprint());
  });
});

describe('boundKeyOf', () => {
  it('the cnf.jkt of a JWT, else undefined', () => {
    const jwt = (payload: object) => `e30.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;
    expect(boundKeyOf(jwt({ cnf: { jkt: 'abc' } }))).toBe('abc');
    expect(boundKeyOf(jwt({ sub: 'a' }))).toBeUndefined();
    expect(boundKeyOf('opaque')).toBeUndefined();
  });
});
