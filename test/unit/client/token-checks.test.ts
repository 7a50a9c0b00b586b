import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckStatus } from '../../../src/client/check.js';
import { tokenChecks, type TokenExpectations } from '../../../src/client/token-checks.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const NOW_SECONDS = NOW / 1000;
const issuer = 'http://127.0.0.1/as';
const resource = 'https://gw.example.com/calc/mcp';

let keys: { privateKey: CryptoKey; publicKey: CryptoKey };
let jwks: Server;
let jwksUri: string;

beforeAll(async () => {
  keys = await generateKeyPair('ES256');
  const body = JSON.stringify({ keys: [{ ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256' }] });
  jwks = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  jwksUri = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`;
});

afterAll(() => new Promise<void>((resolve) => jwks.close(() => resolve())));

function expectations(overrides: Partial<TokenExpectations> = {}): TokenExpectations {
  return { resource, authorizationServers: [{ issuer, jwksUri }], now: NOW, fetch, ...overrides };
}

interface Claims {
  readonly iss?: string;
  readonly aud?: string | string[];
  readonly exp?: number;
  readonly nbf?: number;
  readonly typ?: string;
  readonly key?: CryptoKey;
}

function sign(claims: Claims = {}): Promise<string> {
  const jwt = new SignJWT({ iss: claims.iss ?? issuer, aud: claims.aud ?? resource, ...(claims.nbf === undefined ? {} : { nbf: claims.nbf }) })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: claims.typ ?? 'at+jwt' })
    .setExpirationTime(claims.exp ?? NOW_SECONDS + 300);
  return jwt.sign(claims.key ?? keys.privateKey);
}

async function statuses(token: string, overrides: Partial<TokenExpectations> = {}): Promise<Record<string, CheckStatus>> {
  return Object.fromEntries((await tokenChecks(token, expectations(overrides))).map((check) => [check.id, check.status]));
}

describe('token checks against what discovery found (iss, aud, exp/nbf, signature)', () => {
  it('a right token passes every check', async () => {
    expect(await statuses(await sign())).toEqual({
      'token-format': 'pass',
      'token-issuer': 'pass',
      'token-audience': 'pass',
      'token-lifetime': 'pass',
      'token-signature': 'pass',
    });
  });

  it.each<[string, () => Promise<Claims>, Record<string, CheckStatus>]>([
    ['aud is another resource', () => Promise.resolve({ aud: 'https://gw.example.com/notes/mcp' }), { 'token-audience': 'fail' }],
    ['aud is a list containing the resource', () => Promise.resolve({ aud: ['https://other.example.com', resource] }), { 'token-audience': 'pass' }],
    ['iss is another server', () => Promise.resolve({ iss: 'https://evil.example.com' }), { 'token-issuer': 'fail' }],
    ['expired a second ago', () => Promise.resolve({ exp: NOW_SECONDS - 1 }), { 'token-lifetime': 'fail' }],
    ['expiring exactly now', () => Promise.resolve({ exp: NOW_SECONDS }), { 'token-lifetime': 'fail' }],
    ['not valid yet', () => Promise.resolve({ nbf: NOW_SECONDS + 60 }), { 'token-lifetime': 'fail' }],
    ['typ JWT instead of at+jwt', () => Promise.resolve({ typ: 'JWT' }), { 'token-format': 'warn' }],
    ['signed by a key not in the JWKS', async () => ({ key: (await generateKeyPair('ES256')).privateKey }), { 'token-signature': 'fail' }],
  ])('%s', async (_name, claims, expected) => {
    expect(await statuses(await sign(await claims()))).toMatchObject(expected);
  });

  it('a changed payload breaks the signature', async () => {
    const [header, , signature] = (await sign()).split('.');
    const payload = Buffer.from(JSON.stringify({ iss: issuer, aud: resource, exp: NOW_SECONDS + 300, admin: true })).toString('base64url');
    expect(await statuses(`${header}.${payload}.${signature}`)).toMatchObject({ 'token-signature': 'fail', 'token-audience': 'pass' });
  });

  it.each([
    ['no jwks_uri: not checked (warn)', { authorizationServers: [{ issuer }] }, 'warn'],
    ['an http jwks_uri off loopback: not fetched (fail)', { authorizationServers: [{ issuer, jwksUri: 'http://keys.example.com/jwks' }] }, 'fail'],
  ])('signature with %s', async (_name, overrides, status) => {
    expect((await statuses(await sign(), overrides))['token-signature']).toBe(status);
  });

  it.each(['opaque-0123456789', 'a.b', 'x.y.z.w.v', 'not.a.jwt'])('%s is not a JWT: introspection needed (one warning)', async (token) => {
    expect(await statuses(token)).toEqual({ 'token-format': 'warn' });
  });

  it('messages never contain the token', async () => {
    const token = await sign({ aud: 'https://gw.example.com/notes/mcp', exp: NOW_SECONDS - 5 });
    const checks = await tokenChecks(token, expectations());
    for (const check of checks) {
      for (const part of token.split('.')) expect(check.message).not.toContain(part);
    }
  });
});
