import { inspect } from 'node:util';
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/decision/ports.js';
import { Secret } from '../../../src/config/secret.js';
import { createIdentityAsserter, IDENTITY_ASSERTION_TYP } from '../../../src/identity/assertion.js';
import { createSigningKeySource, generateSigningKey, signingKeyFrom } from '../../../src/identity/signing-key.js';

const START = 1_800_000_000_000;
const settings = { header: 'x-gateway-identity', ttl: 60_000, audience: 'http://calc.internal:3000' };

function caller(overrides: Partial<AuthContext> = {}): AuthContext {
  return {
    issuer: 'https://as.example.test',
    subject: 'alice',
    clientId: 'client-1',
    scopes: new Set(['mcp:tools']),
    audience: [],
    expiresAt: START + 3_600_000,
    tokenKind: 'jwt',
    ...overrides,
  };
}

describe('identity assertions', () => {
  const key = generateSigningKey();
  const asserter = createIdentityAsserter(settings, { issuer: 'https://gw.example.test', key, now: () => START });
  const jwks = createLocalJWKSet({ keys: [key.publicJwk] });

  it('sign a short-lived ES256 JWT verifiable with the published JWKS', async () => {
    const jwt = await asserter.assert(caller(), new Set(['mcp:tools', 'calc:write']));
    const { payload, protectedHeader } = await jwtVerify(jwt, jwks, {
      issuer: 'https://gw.example.test',
      audience: 'http://calc.internal:3000',
      typ: IDENTITY_ASSERTION_TYP,
      algorithms: ['ES256'],
      currentDate: new Date(START),
    });
    expect(protectedHeader).toEqual({ alg: 'ES256', kid: key.kid, typ: IDENTITY_ASSERTION_TYP });
    expect(payload).toMatchObject({ sub: 'alice', client_id: 'client-1', scope: 'calc:write mcp:tools', iat: START / 1000, exp: START / 1000 + 60 });
    expect(typeof payload.jti).toBe('string');
  });

  it('never outlive the caller token, and omit what the caller token lacks', async () => {
    const jwt = await asserter.assert(caller({ expiresAt: START + 10_500, subject: undefined, clientId: undefined }), new Set());
    const { payload } = await jwtVerify(jwt, jwks, { currentDate: new Date(START) });
    expect(payload.exp).toBe(START / 1000 + 10);
    expect(payload).not.toHaveProperty('sub');
    expect(payload).not.toHaveProperty('client_id');
    expect(payload.scope).toBe('');
  });

  it('a fresh jti per request', async () => {
    const [a, b] = await Promise.all([asserter.assert(caller(), new Set()), asserter.assert(caller(), new Set())]);
    const jti = async (jwt: string) => (await jwtVerify(jwt, jwks, { currentDate: new Date(START) })).payload.jti;
    expect(await jti(a)).not.toBe(await jti(b));
  });
});

describe('signing keys', () => {
  it('the JWKS holds public members only; the key prints nothing secret', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(privateKey);
    const key = signingKeyFrom(new Secret(JSON.stringify({ ...jwk, kid: 'configured-1' })));
    expect(key.publicJwk).toEqual({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid: 'configured-1', alg: 'ES256', use: 'sig' });
    expect(JSON.stringify(key.publicJwk)).not.toContain(jwk.d);
    expect(inspect(key, { depth: 5 })).not.toContain(jwk.d);
  });

  it('a PEM key gets its RFC 7638 thumbprint as kid', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const key = signingKeyFrom(new Secret(await exportPKCS8(privateKey)));
    const { calculateJwkThumbprint } = await import('jose');
    expect(key.kid).toBe(await calculateJwkThumbprint(key.publicJwk));
  });

  it('the generated key survives config reloads; a configured key wins', async () => {
    const source = createSigningKeySource();
    const generated = source(undefined);
    expect(source(undefined)).toBe(generated);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const configured = source(new Secret(await exportPKCS8(privateKey)));
    expect(configured.kid).not.toBe(generated.kid);
    expect(createSigningKeySource()(undefined).kid).not.toBe(generated.kid);
    expect(decodeProtectedHeader(await createIdentityAsserter(settings, { issuer: 'https://gw', key: configured }).assert(caller(), new Set())).kid).toBe(configured.kid);
  });
});
