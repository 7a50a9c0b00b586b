import { base64url, generateSecret } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { htuOf, verifyDpopProof, type ProofExpectations } from '../../../src/auth/dpop-proof.js';
import { GatewayError } from '../../../src/decision/refusal.js';
import { createDpopKey, signProof, type DpopKey, type ProofClaims } from '../../helpers/dpop.js';

/** RFC 9449 §4.3: each check a proof must pass at a protected resource, one named test each. */

const HTU = 'https://gw.example.test/calc/mcp';
const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln';
const NOW = 1_800_000_000_000;
const NOW_SECONDS = NOW / 1000;

let key: DpopKey;
let other: DpopKey;
beforeAll(async () => {
  [key, other] = await Promise.all([createDpopKey('ES256'), createDpopKey('ES256')]);
});

function expectations(overrides: Partial<ProofExpectations> = {}): ProofExpectations {
  return {
    method: 'POST',
    uris: [HTU],
    accessToken: TOKEN,
    boundKey: key.jkt,
    algorithms: ['ES256', 'PS256', 'EdDSA'],
    iatWindow: 60_000,
    now: NOW,
    ...overrides,
  };
}

const valid = (overrides: Partial<ProofClaims> = {}): ProofClaims => ({ htm: 'POST', htu: HTU, accessToken: TOKEN, iat: NOW_SECONDS, ...overrides });

async function refusal(proof: string, expected = expectations()): Promise<string | undefined> {
  try {
    await verifyDpopProof(proof, expected);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('invalid_dpop_proof');
    return (error as GatewayError).reason;
  }
  return undefined;
}

describe('verifyDpopProof (RFC 9449 §4.3)', () => {
  it('a valid proof passes and gives its jti, iat and nonce', async () => {
    const proof = await key.proof(valid({ jti: 'j-1', nonce: 'n-1' }));
    await expect(verifyDpopProof(proof, expectations())).resolves.toEqual({ jti: 'j-1', iat: NOW_SECONDS, nonce: 'n-1' });
  });

  it('check 2: not a well-formed JWT → refused', async () => {
    expect(await refusal('not-a-jwt')).toBe('not_compact_jws');
    expect(await refusal('a.b.c')).toBe('header');
  });

  it('check 4: typ other than dpop+jwt → refused', async () => {
    expect(await refusal(await key.proof(valid({ header: { typ: 'JWT' } })))).toBe('typ');
    expect(await refusal(await key.proof(valid({ header: { typ: 'at+jwt' } })))).toBe('typ');
    expect(await refusal(await key.proof(valid({ header: { typ: undefined } })))).toBe('typ');
  });

  it('check 5: alg none → refused', async () => {
    const header = base64url.encode(JSON.stringify({ typ: 'dpop+jwt', alg: 'none', jwk: key.publicJwk }));
    const payload = base64url.encode(JSON.stringify({ jti: 'x', htm: 'POST', htu: HTU, iat: NOW_SECONDS }));
    expect(await refusal(`${header}.${payload}.`)).toBe('not_compact_jws');
    expect(await refusal(`${header}.${payload}.AAAA`)).toBe('alg_not_allowed');
  });

  it('check 5: a symmetric algorithm (HS256) → refused, even with the secret as an oct jwk', async () => {
    const secret = await generateSecret('HS256', { extractable: true });
    const jwk = { kty: 'oct', k: base64url.encode(new Uint8Array(32)) };
    const proof = await signProof(secret, { typ: 'dpop+jwt', alg: 'HS256', jwk }, valid());
    expect(await refusal(proof)).toBe('alg_not_allowed');
    expect(await refusal(proof, expectations({ algorithms: ['HS256'] }))).toBe('jwk_private');
  });

  it('check 5: an asymmetric algorithm outside the route allow-list → refused', async () => {
    const rsa = await createDpopKey('RS256');
    expect(await refusal(await rsa.proof(valid()), expectations({ boundKey: rsa.jkt }))).toBe('alg_not_allowed');
  });

  it('check 6: a bad signature → refused', async () => {
    const proof = await key.proof(valid());
    const [header, payload, signature = ''] = proof.split('.');
    const flipped = (signature.startsWith('A') ? 'B' : 'A') + signature.slice(1);
    expect(await refusal(`${header}.${payload}.${flipped}`)).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
  });

  it('check 6: signed by another key than the one in its header → refused', async () => {
    const proof = await other.proof(valid({ header: { jwk: key.publicJwk } }));
    expect(await refusal(proof)).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
  });

  it('check 7: a private key in the header → refused', async () => {
    expect(await refusal(await key.proof(valid({ header: { jwk: key.privateJwk } })))).toBe('jwk_private');
  });

  it('check 7: no jwk in the header → refused', async () => {
    expect(await refusal(await key.proof(valid({ header: { jwk: undefined } })))).toBe('jwk_missing');
  });

  it('§7.1: a valid proof by another key than the token is bound to → refused', async () => {
    expect(await refusal(await other.proof(valid()))).toBe('key_not_bound');
  });

  it('check 3: a proof without jti → refused', async () => {
    expect(await refusal(await key.proof(valid({ claims: { jti: undefined } })))).toBe('jti');
  });

  it('check 8: a wrong htm → refused', async () => {
    expect(await refusal(await key.proof(valid({ htm: 'GET' })))).toBe('htm');
    expect(await refusal(await key.proof(valid({ htm: 'post' })))).toBe('htm');
  });

  it('check 9: a wrong htu → refused (other path, other host, other scheme)', async () => {
    expect(await refusal(await key.proof(valid({ htu: 'https://gw.example.test/other/mcp' })))).toBe('htu');
    expect(await refusal(await key.proof(valid({ htu: 'https://evil.example/calc/mcp' })))).toBe('htu');
    expect(await refusal(await key.proof(valid({ htu: 'http://gw.example.test/calc/mcp' })))).toBe('htu');
    expect(await refusal(await key.proof(valid({ htu: 'not a uri' })))).toBe('htu');
  });

  it('check 9: htu compares without query and fragment, after normalisation', async () => {
    for (const htu of [`${HTU}?x=1`, `${HTU}#frag`, 'HTTPS://GW.EXAMPLE.TEST:443/calc/mcp', 'https://gw.example.test/calc/./mcp']) {
      expect(await refusal(await key.proof(valid({ htu })))).toBeUndefined();
    }
  });

  it('check 11: a stale iat (outside the window) → refused', async () => {
    expect(await refusal(await key.proof(valid({ iat: NOW_SECONDS - 61 })))).toBe('iat_stale');
    expect(await refusal(await key.proof(valid({ iat: NOW_SECONDS - 60 })))).toBeUndefined();
  });

  it('check 11: an iat in the future (outside the window) → refused', async () => {
    expect(await refusal(await key.proof(valid({ iat: NOW_SECONDS + 61 })))).toBe('iat_future');
    expect(await refusal(await key.proof(valid({ iat: NOW_SECONDS + 60 })))).toBeUndefined();
  });

  it('check 11: no iat → refused', async () => {
    expect(await refusal(await key.proof(valid({ claims: { iat: undefined } })))).toBe('iat_missing');
  });

  it('check 12: a missing ath → refused', async () => {
    expect(await refusal(await key.proof(valid({ ath: undefined })))).toBe('ath_missing');
  });

  it('check 12: an ath of another access token → refused', async () => {
    expect(await refusal(await key.proof(valid({ accessToken: `${TOKEN}x` })))).toBe('ath');
  });

  it('a nonce that is not a string → refused', async () => {
    expect(await refusal(await key.proof(valid({ claims: { nonce: 42 } })))).toBe('nonce_type');
  });

  it('EdDSA proofs verify when the route allows them', async () => {
    const ed = await createDpopKey('EdDSA');
    expect(await refusal(await ed.proof(valid()), expectations({ boundKey: ed.jkt }))).toBeUndefined();
  });
});

describe('htuOf', () => {
  it('drops query and fragment and normalises case and default port', () => {
    expect(htuOf('HTTPS://Gw.Example.Test:443/calc/mcp?a=1#b')).toBe(HTU);
  });
  it('is undefined for what is not an absolute http(s) URI', () => {
    expect(htuOf('/calc/mcp')).toBeUndefined();
    expect(htuOf('ftp://gw.example.test/calc/mcp')).toBeUndefined();
  });
});
