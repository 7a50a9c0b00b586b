import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { base64url, CompactSign, exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import type { Logger } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JWKS_MAX_AGE_MS, JWKS_RETRY_BACKOFF_MS } from '../../src/auth/jwks-source.js';
import { createJwtVerifier, createJwtVerifierCaches, type JwtVerifierCaches } from '../../src/auth/jwt-verifier.js';
import type { TokenVerifier } from '../../src/decision/ports.js';
import type { JwtSettings } from '../../src/config/types.js';
import { GatewayError } from '../../src/decision/refusal.js';
import type { MaybePromise } from '../../src/lib/maybe-promise.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { compileJwtSettings } from '../helpers/gateway.js';

// ---------------------------------------------------------------------------------------------------------------
// A real authorization-server side: JWKS and metadata documents over node:http on port 0, requests recorded.

type JwksMode = 'ok' | 'status' | 'reset' | 'garbage' | 'hang';

interface TestServer {
  readonly origin: string;
  /** Paths requested, in order. */
  readonly requests: string[];
  count(path: string): number;
  /** Resolves when the next request for `path` arrives. */
  nextRequest(path: string): Promise<void>;
  close(): Promise<void>;
}

async function listen(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<TestServer> {
  const requests: string[] = [];
  const waiters: { path: string; resolve: () => void }[] = [];
  const server = createServer((request, response) => {
    const path = request.url ?? '';
    requests.push(path);
    for (const waiter of waiters.filter((candidate) => candidate.path === path)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    count: (path) => requests.filter((requested) => requested === path).length,
    nextRequest: (path) => new Promise<void>((resolve) => waiters.push({ path, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sendJson(response: ServerResponse, body: unknown): void {
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify(body));
}

interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly publicJwk: JWK;
}

async function makeKey(kid: string, alg: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicKey, publicJwk: { ...(await exportJWK(publicKey)), kid, use: 'sig' } };
}

const T0 = Date.UTC(2031, 0, 1, 12, 0, 0);
const NOW_S = T0 / 1000;
const RESOURCE = 'https://mcp.example.com/calc/mcp';
const JWKS_PATH = '/jwks';

let as: TestServer;
let attacker: TestServer;
let ISSUER: string;
let JWKS_URL: string;
let es1: SigningKey;
let es2: SigningKey;
let rs1: SigningKey;
let rs512: SigningKey;
let ps256: SigningKey;
let evil: SigningKey;
let ed: SigningKey;

/** Mutable per test, reset in beforeEach. */
let jwks: unknown;
let jwksMode: JwksMode;
let documents: Map<string, unknown>;
let clock: number;

beforeAll(async () => {
  [es1, es2, rs1, rs512, ps256, evil, ed] = await Promise.all([
    makeKey('es-1', 'ES256'),
    makeKey('es-2', 'ES256'),
    makeKey('rs-1', 'RS256'),
    makeKey('rs-512', 'RS512'),
    makeKey('ps-1', 'PS256'),
    makeKey('evil-1', 'ES256'),
    makeKey('ed-1', 'Ed25519'),
  ]);
  as = await listen((request, response) => {
    const path = request.url ?? '';
    if (path === JWKS_PATH) {
      switch (jwksMode) {
        case 'ok':
          return sendJson(response, jwks);
        case 'status':
          response.statusCode = 503;
          return response.end();
        case 'reset':
          return request.socket.destroy();
        case 'garbage':
          response.setHeader('content-type', 'text/html');
          return response.end('<html>maintenance</html>');
        case 'hang':
          return; // never answers; closeAllConnections() ends it
      }
    }
    if (documents.has(path)) return sendJson(response, documents.get(path));
    response.statusCode = 404;
    response.end();
  });
  attacker = await listen((_request, response) => sendJson(response, { keys: [evil.publicJwk] }));
  ISSUER = `${as.origin}/realms/mcp`;
  JWKS_URL = `${as.origin}${JWKS_PATH}`;
});

afterAll(async () => {
  await Promise.all([as.close(), attacker.close()]);
});

const verifiers: TokenVerifier[] = [];
/** JWKS fetch outcomes of this test's verifiers, in order: `success` or the failure reason. */
let refreshes: string[];
let refreshWaiters: (() => void)[];

/** Resolves at the next finished JWKS fetch; take it before the request that starts the fetch. */
function nextRefresh(): Promise<void> {
  return new Promise((resolve) => refreshWaiters.push(resolve));
}

beforeEach(() => {
  refreshes = [];
  refreshWaiters = [];
  jwks = { keys: [es1.publicJwk, rs1.publicJwk, rs512.publicJwk, ps256.publicJwk] };
  jwksMode = 'ok';
  documents = new Map();
  clock = T0;
  as.requests.length = 0;
  attacker.requests.length = 0;
});

afterEach(async () => {
  await Promise.all(verifiers.splice(0).map((verifier) => verifier.close()));
});

function settings(overrides: Partial<JwtSettings> = {}): JwtSettings {
  return {
    issuer: ISSUER,
    jwksUri: new URL(JWKS_URL),
    algorithms: ['ES256', 'RS256'],
    audiences: [RESOURCE],
    strictAudience: false,
    clockTolerance: 30_000,
    requireTyp: true,
    maxLifetime: 24 * 3_600_000,
    jwksStaleWindow: 3_600_000,
    jwksCooldown: 30_000,
    fetchTimeout: 2_000,
    ...overrides,
  };
}

const counters = {
  jwksRefresh: (result: 'success' | 'failure', reason?: string): void => {
    refreshes.push(reason ?? result);
    for (const resolve of refreshWaiters.splice(0)) resolve();
  },
};

interface VerifierDeps {
  readonly fetch?: typeof fetch;
  readonly logger?: Logger;
  /** Shared as the routes of one gateway, and its runtimes across reloads, share them. */
  readonly caches?: JwtVerifierCaches;
}

function verifier(overrides: Partial<JwtSettings> = {}, deps: VerifierDeps = {}): TokenVerifier {
  const created = createJwtVerifier(settings(overrides), { now: () => clock, counters, ...deps });
  verifiers.push(created);
  return created;
}

async function warmVerifier(overrides: Partial<JwtSettings> = {}, deps: VerifierDeps = {}): Promise<TokenVerifier> {
  const created = verifier(overrides, deps);
  await created.warm();
  expect(created.isReady()).toBe(true);
  return created;
}

interface MintOptions {
  readonly claims?: Record<string, unknown>;
  readonly header?: Record<string, unknown>;
  readonly key?: SigningKey;
}

/** A token the default verifier accepts, unless options change it. `undefined` removes a claim or header. */
function mint(options: MintOptions = {}): Promise<string> {
  const key = options.key ?? es1;
  const nowSeconds = Math.floor(clock / 1000);
  return new SignJWT({
    iss: ISSUER,
    aud: RESOURCE,
    sub: 'user-1',
    client_id: 'client-1',
    scope: 'mcp:tools',
    iat: nowSeconds,
    exp: nowSeconds + 300,
    ...options.claims,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...options.header })
    .sign(key.privateKey);
}

/** Signs arbitrary payload bytes (not necessarily a JSON object) with a real key. */
function signRaw(payload: string, header: Record<string, unknown> = {}, key: SigningKey = es1): Promise<string> {
  return new CompactSign(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .sign(key.privateKey);
}

const b64 = (value: unknown): string => base64url.encode(JSON.stringify(value));

/** ES256 over any header, bypassing jose's signing-side checks (it refuses unknown `crit` values). */
async function signUnchecked(header: Record<string, unknown>, claims: Record<string, unknown>): Promise<string> {
  const input = `${b64({ alg: 'ES256', kid: es1.kid, typ: 'at+jwt', ...header })}.${b64(claims)}`;
  const signature = await crypto.subtle.sign(
    { name: 'ECDSA', hash: 'SHA-256' },
    es1.privateKey,
    new TextEncoder().encode(input),
  );
  return `${input}.${base64url.encode(new Uint8Array(signature))}`;
}

function validClaims(): Record<string, unknown> {
  return { iss: ISSUER, aud: RESOURCE, sub: 'user-1', iat: NOW_S, exp: NOW_S + 300 };
}

async function rejection(verdict: MaybePromise<unknown>): Promise<GatewayError> {
  const error = await Promise.resolve(verdict).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

/** Rejected as invalid_token; the error carries no cause (jose claim errors hold the payload) and never the token. */
async function expectInvalid(verifying: TokenVerifier, token: string, reason?: string, connection?: object): Promise<void> {
  const error = await rejection(verifying.verify(token, { connection }));
  expect(error.code).toBe('invalid_token');
  if (reason !== undefined) expect(error.reason).toBe(reason);
  expect(error.cause).toBeUndefined();
  if (token.length >= 8) expect(`${error.message} ${error.reason ?? ''}`).not.toContain(token.slice(0, 64));
}

async function expectUnavailable(verifying: TokenVerifier, token: string, reason?: string): Promise<void> {
  const error = await rejection(verifying.verify(token));
  expect(error.code).toBe('auth_unavailable');
  if (reason !== undefined) expect(error.reason).toBe(reason);
}

// ---------------------------------------------------------------------------------------------------------------

describe('accepted tokens', () => {
  it('ES256 and RS256 tokens from the JWKS resolve an AuthContext', async () => {
    const verifying = await warmVerifier();
    const context = await verifying.verify(await mint({ claims: { scope: 'mcp:tools calc:write' } }));
    expect(context).toEqual({
      issuer: ISSUER,
      subject: 'user-1',
      clientId: 'client-1',
      scopes: new Set(['mcp:tools', 'calc:write']),
      audience: [RESOURCE],
      expiresAt: (NOW_S + 300) * 1000,
      tokenKind: 'jwt',
    });
    await expect(verifying.verify(await mint({ key: rs1 }))).resolves.toMatchObject({ subject: 'user-1' });
  });

  it('clientId falls back to azp; identity claims of the wrong type are invalid', async () => {
    const verifying = await warmVerifier();
    const azp = await verifying.verify(await mint({ claims: { client_id: undefined, azp: 'spa' } }));
    expect(azp.clientId).toBe('spa');
    await expectInvalid(verifying, await mint({ claims: { sub: 42 } }), 'claim_type');
    await expectInvalid(verifying, await mint({ claims: { client_id: ['a'] } }), 'claim_type');
  });

  it.each([
    ['an empty sub', { sub: '' }, { subject: undefined, clientId: 'client-1' }],
    ['an empty client_id next to an azp', { client_id: '', azp: 'spa' }, { subject: 'user-1', clientId: 'spa' }],
    ['an empty azp', { client_id: undefined, azp: '' }, { subject: 'user-1', clientId: undefined }],
  ])('K4 %s counts as absent: no principal is named by an empty string', async (_case, claims, identity) => {
    const verifying = await warmVerifier();
    await expect(verifying.verify(await mint({ claims }))).resolves.toMatchObject(identity);
  });

  it('a verified token is served from the result cache at once (no promise) without another JWKS fetch', async () => {
    const verifying = await warmVerifier();
    const token = await mint();
    const first = await verifying.verify(token);
    expect(verifying.verify(token)).toBe(first);
    expect(as.count(JWKS_PATH)).toBe(1);
  });
});

describe('per-connection cache keys', () => {
  it('a forged token on the connection of a verified one is verified on its own and refused', async () => {
    const verifying = await warmVerifier();
    const connection = {};
    const good = await mint();
    await verifying.verify(good, { connection });
    const [header, payload] = good.split('.');
    // Same header and payload, another signature; then the good token's signature on another payload.
    await expectInvalid(verifying, `${header}.${payload}.${'A'.repeat(86)}`, undefined, connection);
    const other = await mint({ claims: { sub: 'mallory' } });
    await expectInvalid(verifying, `${other.split('.').slice(0, 2).join('.')}.${good.split('.')[2] ?? ''}`, undefined, connection);
    // The good token on the same connection is still served from the cache.
    expect(verifying.verify(good, { connection })).toMatchObject({ subject: 'user-1' });
  });
});

describe('B — signature, algorithm, keys', () => {
  it.each([
    ['random string', 'hello'],
    ['JWT-shaped garbage', 'eyJfoobar.eyJfoobar.12345asdf'],
    ['empty', ''],
    ['dots only', '..'],
    ['one segment', 'abc'],
  ])('B1 %s → invalid_token without any JWKS fetch', async (_name, token) => {
    const verifying = verifier();
    await expectInvalid(verifying, token);
    expect(as.requests).toEqual([]);
  });

  it.each([['none'], ['None'], ['NONE'], ['nOnE']])('B2 alg %s with valid claims → invalid_token, no JWKS fetch', async (alg) => {
    const verifying = verifier();
    const header = b64({ alg, typ: 'at+jwt' });
    await expectInvalid(verifying, `${header}.${b64(validClaims())}.`);
    await expectInvalid(verifying, `${header}.${b64(validClaims())}.c2lnbmF0dXJl`);
    expect(as.requests).toEqual([]);
  });

  it('B2 a real header with an empty signature → invalid_token', async () => {
    const verifying = await warmVerifier();
    const [header = '', payload = ''] = (await mint()).split('.');
    await expectInvalid(verifying, `${header}.${payload}.`);
  });

  it.each([['PEM'], ['JWK JSON']])('B3 HS256 keyed with the RSA public key as %s → invalid_token, no JWKS fetch', async (form) => {
    const verifying = verifier({ algorithms: ['RS256'] });
    const secret = form === 'PEM' ? await exportSPKI(rs1.publicKey) : JSON.stringify(rs1.publicJwk);
    const token = await new SignJWT(validClaims())
      .setProtectedHeader({ alg: 'HS256', kid: 'rs-1', typ: 'at+jwt' })
      .sign(new TextEncoder().encode(secret));
    await expectInvalid(verifying, token, 'ERR_JOSE_ALG_NOT_ALLOWED');
    expect(as.requests).toEqual([]);
  });

  it.each([['RS512'], ['PS256']])('B4 %s with a valid signature but outside the allow-list → ERR_JOSE_ALG_NOT_ALLOWED', async (alg) => {
    const key = alg === 'RS512' ? rs512 : ps256;
    const token = await mint({ key });
    await expectInvalid(await warmVerifier(), token, 'ERR_JOSE_ALG_NOT_ALLOWED');
    // Control: the same token is otherwise valid.
    const allowing = verifier({ algorithms: ['ES256', key.alg as 'RS512' | 'PS256'] });
    await expect(allowing.verify(token)).resolves.toMatchObject({ subject: 'user-1' });
  });

  it('B5 unknown kid → exactly one refetch off cooldown, then none within the cooldown', async () => {
    const verifying = await warmVerifier();
    expect(as.count(JWKS_PATH)).toBe(1);
    // Right after a fetch the set is cooling down: no refetch.
    await expectInvalid(verifying, await mint({ key: es2 }), 'ERR_JWKS_NO_MATCHING_KEY');
    expect(as.count(JWKS_PATH)).toBe(1);

    clock += 30_000;
    await expectInvalid(verifying, await mint({ key: es2 }), 'ERR_JWKS_NO_MATCHING_KEY');
    expect(as.count(JWKS_PATH)).toBe(2);
    await expectInvalid(verifying, await mint({ key: es2, header: { kid: 'another-unknown' } }), 'ERR_JWKS_NO_MATCHING_KEY');
    await expectInvalid(verifying, await mint({ key: evil }), 'ERR_JWKS_NO_MATCHING_KEY');
    expect(as.count(JWKS_PATH)).toBe(2);
  });

  it.each([
    ['jku', (origin: string) => ({ jku: `${origin}/jwks` })],
    ['x5u', (origin: string) => ({ x5u: `${origin}/cert.pem` })],
    ['jku to link-local metadata', () => ({ jku: 'http://169.254.169.254/latest/meta-data/' })],
  ])('B7 header %s is never followed', async (_name, header) => {
    const fetched: string[] = [];
    const spy: typeof fetch = (input, init) => {
      fetched.push(input instanceof Request ? input.url : String(input));
      return fetch(input, init);
    };
    const verifying = verifier({}, { fetch: spy });
    // Signed by the attacker with a kid only the attacker's set has → invalid.
    await expectInvalid(verifying, await mint({ key: evil, header: header(attacker.origin) }));
    // Signed by the real key with the same header → accepted: the header is ignored, not trusted.
    await expect(verifying.verify(await mint({ header: header(attacker.origin) }))).resolves.toMatchObject({
      subject: 'user-1',
    });
    expect(attacker.requests).toEqual([]);
    expect(new Set(fetched)).toEqual(new Set([JWKS_URL]));
  });

  it.each([['with the real kid', 'es-1'], ['without kid', undefined]])(
    'B8 embedded jwk header (attacker key, %s) → invalid_token',
    async (_name, kid) => {
      const verifying = await warmVerifier();
      const token = await mint({ key: evil, header: { kid, jwk: evil.publicJwk } });
      await expectInvalid(verifying, token, 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
      expect(attacker.requests).toEqual([]);
    },
  );

  it('B9 unrecognised crit extension, malformed crit, and b64:false → invalid_token', async () => {
    const verifying = await warmVerifier();
    const claims = validClaims();
    await expect(verifying.verify(await signUnchecked({}, claims))).resolves.toBeDefined();
    await expectInvalid(verifying, await signUnchecked({ crit: ['exp-custom'], 'exp-custom': 1 }, claims), 'ERR_JOSE_NOT_SUPPORTED');
    await expectInvalid(verifying, await signUnchecked({ crit: [] }, claims), 'ERR_JWS_INVALID');
    await expectInvalid(verifying, await signUnchecked({ crit: 'exp-custom' }, claims), 'ERR_JWS_INVALID');
    await expectInvalid(verifying, await signUnchecked({ crit: ['b64'] }, claims), 'ERR_JWS_INVALID');
    // b64:false makes the base64url text itself the payload; jwtVerify refuses unencoded payloads for JWTs.
    await expectInvalid(verifying, await signUnchecked({ b64: false, crit: ['b64'] }, claims), 'ERR_JWT_INVALID');
    // Compact serialization has no unprotected header, so `crit` outside the protected header cannot be expressed.
  });

  it('B10 JWE-shaped and nested tokens → invalid_token', async () => {
    const verifying = await warmVerifier();
    await expectInvalid(verifying, `${b64({ alg: 'RSA-OAEP', enc: 'A256GCM' })}.a2V5.aXY.Y2lwaGVy.dGFn`);
    const inner = await mint();
    await expectInvalid(verifying, await signRaw(inner, { cty: 'JWT' }));
    await expectInvalid(verifying, await mint({ header: { cty: 'JWT' } }), 'nested_jwt');
    await expectInvalid(verifying, await mint({ header: { cty: 'application/jwt' } }), 'nested_jwt');
    await expectInvalid(verifying, await mint({ header: { enc: 'A256GCM' } }), 'jwe_header');
  });

  it('B11 zero, truncated and padded signatures → invalid_token', async () => {
    const verifying = await warmVerifier();
    const [header = '', payload = '', signature = ''] = (await mint()).split('.');
    const zero = base64url.encode(new Uint8Array(64));
    await expectInvalid(verifying, `${header}.${payload}.${zero}`, 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
    await expectInvalid(verifying, `${header}.${payload}.${signature.slice(0, -4)}`);
    await expectInvalid(verifying, `${header}.${payload}.${signature}AAAA`);
    const [rsHeader = '', rsPayload = '', rsSignature = ''] = (await mint({ key: rs1 })).split('.');
    await expectInvalid(verifying, `${rsHeader}.${rsPayload}.${rsSignature.slice(0, 100)}`);
  });

  describe('B12 malformed compact serialization', () => {
    let valid: string[];
    beforeEach(async () => {
      valid = (await mint()).split('.');
    });
    const cases: [string, (parts: string[]) => string | Promise<string>][] = [
      ['!! in header', ([h, p, s]) => `${h}!!.${p}.${s}`],
      ['% in payload', ([h, p, s]) => `${h}.${p}%41.${s}`],
      ['padding in header', ([h, p, s]) => `${h}==.${p}.${s}`],
      ['padding in payload', ([h, p, s]) => `${h}.${p}=.${s}`],
      ['padding in signature', ([h, p, s]) => `${h}.${p}.${s}=`],
      ['two parts', ([h, p]) => `${h}.${p}`],
      ['four parts', ([h, p, s]) => `${h}.${p}.${s}.${s}`],
      ['empty header', ([, p, s]) => `.${p}.${s}`],
      ['header not JSON', ([, p, s]) => `${base64url.encode('{alg')}.${p}.${s}`],
      ['header JSON array', ([, p, s]) => `${b64(['ES256'])}.${p}.${s}`],
      ['header JSON string', ([, p, s]) => `${b64('ES256')}.${p}.${s}`],
      ['payload null (signed)', () => signRaw('null')],
      ['payload [] (signed)', () => signRaw('[]')],
      ['payload 0 (signed)', () => signRaw('0')],
      ['payload not JSON (signed)', () => signRaw('not json')],
      ['payload invalid UTF-8', ([h, , s]) => `${h}.${base64url.encode(new Uint8Array([0x7b, 0xff, 0x7d]))}.${s}`],
      ['whitespace inside', ([h, p, s]) => `${h}.${p} .${s}`],
    ];
    it.each(cases)('B12 %s → invalid_token', async (_name, build) => {
      await expectInvalid(await warmVerifier(), await build(valid));
    });
  });

  it('B13 random bytes, deep nesting and a 1 MB token → invalid_token, no crash', async () => {
    const verifying = await warmVerifier();
    for (let round = 0; round < 50; round += 1) {
      const bytes = randomBytes(1 + (round * 37) % 400);
      await expectInvalid(verifying, bytes.toString('latin1'));
      await expectInvalid(verifying, `${bytes.toString('base64url')}.${bytes.toString('base64url')}.${bytes.toString('base64url')}`);
    }
    const depth = 100_000;
    const nested = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    await expectInvalid(verifying, `${b64({ alg: 'ES256', kid: 'es-1' })}.${base64url.encode(nested)}.c2ln`);
    await expectInvalid(verifying, await signRaw(nested));
    await expectInvalid(verifying, `${b64({ alg: 'ES256' })}.${'A'.repeat(1024 * 1024)}.c2ln`);
  });

  it('B14 several keys match a token without kid → ERR_JWKS_MULTIPLE_MATCHING_KEYS', async () => {
    const withoutKid = (jwk: JWK): JWK => {
      const copy = { ...jwk };
      delete copy.kid;
      return copy;
    };
    jwks = { keys: [withoutKid(es1.publicJwk), withoutKid(es2.publicJwk)] };
    const verifying = await warmVerifier();
    await expectInvalid(verifying, await mint({ header: { kid: undefined } }), 'ERR_JWKS_MULTIPLE_MATCHING_KEYS');
  });

  it.each<[string, () => Promise<JWK>]>([
    ['a symmetric key', () => Promise.resolve({ kty: 'oct', k: base64url.encode(randomBytes(32)), kid: 'hmac' })],
    ['a private RSA key', async () => ({ ...(await exportJWK(rs1.privateKey)), kid: 'rs-priv' })],
    ['a private EC key', async () => ({ ...(await exportJWK(es1.privateKey)), kid: 'es-priv' })],
  ])('B15 a JWKS containing %s is invalid as a whole → auth_unavailable, never used', async (_name, extra) => {
    jwks = { keys: [es1.publicJwk, await extra()] };
    const verifying = verifier();
    await verifying.warm();
    expect(verifying.isReady()).toBe(false);
    await expectUnavailable(verifying, await mint(), 'jwks_invalid');
  });

  it.each([
    ['not an object', []],
    ['keys not an array', { keys: {} }],
    ['a key that is not an object', { keys: ['x'] }],
  ])('B15 a malformed JWKS (%s) → auth_unavailable', async (_name, body) => {
    jwks = body;
    await expectUnavailable(verifier(), await mint(), 'jwks_invalid');
  });
});

describe('C — claims', () => {
  it('C1 exp in the past beyond tolerance → invalid; exactly now with zero tolerance → invalid; within tolerance → ok', async () => {
    const verifying = await warmVerifier();
    await expectInvalid(verifying, await mint({ claims: { exp: NOW_S - 31 } }), 'ERR_JWT_EXPIRED');
    await expect(verifying.verify(await mint({ claims: { exp: NOW_S - 29 } }))).resolves.toBeDefined();
    const strict = await warmVerifier({ clockTolerance: 0 });
    await expectInvalid(strict, await mint({ claims: { exp: NOW_S } }), 'ERR_JWT_EXPIRED');
  });

  it('C1 a cached result expires with the injected clock', async () => {
    const verifying = await warmVerifier();
    const token = await mint({ claims: { exp: NOW_S + 60 } });
    await verifying.verify(token);
    clock = T0 + 60_000 + 29_000;
    expect(await verifying.verify(token)).toMatchObject({ tokenKind: 'jwt' });
    clock = T0 + 60_000 + 30_000;
    await expectInvalid(verifying, token, 'ERR_JWT_EXPIRED');
  });

  it('C2 no exp → invalid; lifetime beyond maxLifetime → invalid', async () => {
    const verifying = await warmVerifier({ maxLifetime: 24 * 3_600_000 });
    await expectInvalid(verifying, await mint({ claims: { exp: undefined } }), 'ERR_JWT_CLAIM_VALIDATION_FAILED');
    await expectInvalid(verifying, await mint({ claims: { exp: NOW_S + 30 * 86_400 } }), 'lifetime_exceeded');
    await expectInvalid(verifying, await mint({ claims: { iat: undefined, exp: NOW_S + 30 * 86_400 } }), 'lifetime_exceeded');
    await expectInvalid(verifying, await mint({ claims: { iat: NOW_S - 29 * 86_400, exp: NOW_S + 3600 } }), 'lifetime_exceeded');
    await expect(verifying.verify(await mint({ claims: { exp: NOW_S + 86_400 } }))).resolves.toBeDefined();
  });

  it('C3 nbf within tolerance → ok; nbf beyond → invalid; iat in the future → invalid', async () => {
    const verifying = await warmVerifier({ clockTolerance: 30_000 });
    await expect(verifying.verify(await mint({ claims: { nbf: NOW_S + 5 } }))).resolves.toBeDefined();
    await expectInvalid(verifying, await mint({ claims: { nbf: NOW_S + 120 } }), 'ERR_JWT_CLAIM_VALIDATION_FAILED');
    await expectInvalid(verifying, await mint({ claims: { iat: NOW_S + 3600, exp: NOW_S + 7200 } }), 'iat_in_future');
    await expect(verifying.verify(await mint({ claims: { iat: NOW_S + 5 } }))).resolves.toBeDefined();
  });

  it.each([
    ['exp', '1700000000'],
    ['exp', null],
    ['nbf', String(NOW_S)],
    ['nbf', null],
    ['iat', String(NOW_S)],
    ['iat', null],
    ['exp', `${NOW_S + 300}`],
  ])('C4 %s = %j → invalid_token', async (claim, value) => {
    await expectInvalid(await warmVerifier(), await mint({ claims: { [claim]: value } }), 'ERR_JWT_CLAIM_VALIDATION_FAILED');
  });

  it.each([
    ['trailing slash', (issuer: string) => `${issuer}/`],
    ['different case', (issuer: string) => issuer.replace('realms', 'Realms')],
    ['another tenant sharing keys', (issuer: string) => issuer.replace('/mcp', '/other')],
    ['prefix', (issuer: string) => `${issuer}x`],
  ])('C5 iss %s with a valid signature → invalid_token, no JWKS fetch', async (_name, variant) => {
    const verifying = verifier();
    await expectInvalid(verifying, await mint({ claims: { iss: variant(ISSUER) } }), 'issuer_mismatch');
    expect(as.requests).toEqual([]);
  });

  it('C6 no iss → invalid_token', async () => {
    await expectInvalid(verifier(), await mint({ claims: { iss: undefined } }), 'issuer_mismatch');
  });

  it.each([
    ['another resource', 'https://mcp.example.com/other/mcp'],
    ['missing', undefined],
    ['the client_id', 'client-1'],
    ['a prefix attack', 'https://mcp.example.com.attacker.test'],
    ['the resource plus a suffix', `${RESOURCE}/extra`],
    ['an empty array', []],
    ['C9 another surface of the same AS', 'https://auth.example.com/admin/api'],
  ])('C7 aud = %s → invalid_token', async (_name, aud) => {
    await expectInvalid(await warmVerifier(), await mint({ claims: { aud } }), 'ERR_JWT_CLAIM_VALIDATION_FAILED');
  });

  it('C9 an id_token of the same AS (aud = client_id, nonce, at_hash, typ JWT) → invalid_token', async () => {
    const token = await mint({
      claims: { aud: 'client-1', nonce: 'n-0S6', at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q' },
      header: { typ: 'JWT' },
    });
    await expectInvalid(await warmVerifier({ requireTyp: false }), token, 'ERR_JWT_CLAIM_VALIDATION_FAILED');
  });

  it('C10 aud [resource, foreign]: accepted by membership, rejected in strict mode', async () => {
    const both = await mint({ claims: { aud: [RESOURCE, 'https://other.example.com/mcp'] } });
    await expect((await warmVerifier()).verify(both)).resolves.toMatchObject({
      audience: [RESOURCE, 'https://other.example.com/mcp'],
    });
    const strict = await warmVerifier({ strictAudience: true });
    await expectInvalid(strict, both, 'audience_not_exclusive');
    await expect(strict.verify(await mint({ claims: { aud: [RESOURCE] } }))).resolves.toBeDefined();
    await expect(strict.verify(await mint({ claims: { aud: RESOURCE } }))).resolves.toBeDefined();
    await expectInvalid(strict, await mint({ claims: { aud: [RESOURCE, RESOURCE] } }), 'audience_not_exclusive');
  });

  it('C10 audience list: any listed value is accepted, none → invalid_token; strict mode wants exactly one listed value', async () => {
    const listed = await warmVerifier({ audiences: ['api://calc', 'urn:example:calc'] });
    await expect(listed.verify(await mint({ claims: { aud: 'urn:example:calc' } }))).resolves.toBeDefined();
    await expect(listed.verify(await mint({ claims: { aud: ['https://other.example.com/mcp', 'api://calc'] } }))).resolves.toBeDefined();
    await expectInvalid(listed, await mint({ claims: { aud: RESOURCE } }), 'ERR_JWT_CLAIM_VALIDATION_FAILED');
    const strict = await warmVerifier({ audiences: ['api://calc', 'urn:example:calc'], strictAudience: true });
    await expect(strict.verify(await mint({ claims: { aud: ['urn:example:calc'] } }))).resolves.toBeDefined();
    await expectInvalid(strict, await mint({ claims: { aud: ['api://calc', 'urn:example:calc'] } }), 'audience_not_exclusive');
  });

  it.each([['at+jwt'], ['application/at+jwt'], ['AT+JWT'], ['Application/AT+JWT']])(
    'C11 typ %s accepted when at+jwt is required',
    async (typ) => {
      await expect((await warmVerifier()).verify(await mint({ header: { typ } }))).resolves.toBeDefined();
    },
  );

  it.each([['JWT'], ['jwt'], ['application/jwt'], ['at+jwt2'], [undefined]])(
    'C11 typ %s rejected when at+jwt is required, accepted when not',
    async (typ) => {
      const token = await mint({ header: { typ } });
      await expectInvalid(await warmVerifier({ requireTyp: true }), token, 'ERR_JWT_CLAIM_VALIDATION_FAILED');
      await expect((await warmVerifier({ requireTyp: false })).verify(token)).resolves.toBeDefined();
    },
  );

  it.each<[string, Record<string, unknown>, string[]]>([
    ['space-delimited scope', { scope: 'files:read files:write' }, ['files:read', 'files:write']],
    ['scp array fallback', { scope: undefined, scp: ['files:read', 'files:write'] }, ['files:read', 'files:write']],
    ['scope wins over scp', { scope: 'files:read', scp: ['files:write'] }, ['files:read']],
    ['case and wildcards kept verbatim', { scope: 'FILES:WRITE files:*' }, ['FILES:WRITE', 'files:*']],
    ['non-string scope → none', { scope: 7 }, []],
    ['no scope claim → none', { scope: undefined }, []],
  ])('C15 %s', async (_name, claims, expected) => {
    const context = await (await warmVerifier()).verify(await mint({ claims }));
    expect([...context.scopes]).toEqual(expected);
  });
});

describe('E2 — attacker-controlled header values are never reflected', () => {
  it.each([['kid with "quote"'], ['kid with \\backslash'], ['kid\r\nInjected: 1'], ['kid ✓ unicode']])('%j', async (kid) => {
    const error = await rejection((await warmVerifier()).verify(await mint({ header: { kid } })));
    expect(error.code).toBe('invalid_token');
    expect(error.message).not.toContain(kid);
    expect(error.reason).toMatch(/^[A-Za-z0-9_]+$/);
  });
});

describe('I — JWKS faults', () => {
  it.each<[JwksMode, string]>([
    ['status', 'jwks_status'],
    ['reset', 'jwks_unreachable'],
    ['garbage', 'jwks_not_json'],
  ])('I2 JWKS %s at cold start → auth_unavailable and not ready; retried after the backoff', async (mode, reason) => {
    jwksMode = mode;
    const verifying = verifier();
    await verifying.warm();
    expect(verifying.isReady()).toBe(false);
    const token = await mint();
    await expectUnavailable(verifying, token, reason);
    expect(as.count(JWKS_PATH)).toBe(1);

    jwksMode = 'ok';
    await expectUnavailable(verifying, token, reason);
    clock += JWKS_RETRY_BACKOFF_MS;
    await expect(verifying.verify(token)).resolves.toBeDefined();
    expect(verifying.isReady()).toBe(true);
    expect(as.count(JWKS_PATH)).toBe(2);
  });

  it.each<[JwksMode]>([['status'], ['reset'], ['garbage']])(
    'I3 JWKS %s with a warm cache: known kid within the stale window → ok, after → auth_unavailable; unknown kid → auth_unavailable',
    async (mode) => {
      const staleWindow = 3_600_000;
      const verifying = await warmVerifier({ jwksStaleWindow: staleWindow });
      const known = await mint({ claims: { exp: NOW_S + 3 * 3600 } });
      const unknown = await mint({ key: es2, claims: { exp: NOW_S + 3 * 3600 } });
      await verifying.verify(known);
      jwksMode = mode;

      clock = T0 + JWKS_MAX_AGE_MS + 1;
      // Served from the set at hand while one fetch renews it in the background (K9), which fails.
      const renewal = nextRefresh();
      await expect(verifying.verify(known)).resolves.toBeDefined();
      await renewal;
      expect(as.count(JWKS_PATH)).toBe(2);
      await expectUnavailable(verifying, unknown);

      clock += JWKS_RETRY_BACKOFF_MS;
      await expectUnavailable(verifying, unknown);
      expect(as.count(JWKS_PATH)).toBe(3);

      clock = T0 + JWKS_MAX_AGE_MS + staleWindow - 1;
      await expect(verifying.verify(known)).resolves.toBeDefined();
      clock = T0 + JWKS_MAX_AGE_MS + staleWindow + 1;
      await expectUnavailable(verifying, known);
      expect(verifying.isReady()).toBe(true);

      // Garbage stays invalid_token even while the JWKS is down.
      await expectInvalid(verifying, 'eyJfoobar.eyJfoobar.12345asdf');
    },
  );

  it('I3 unknown kid while the JWKS is fresh but now unreachable → auth_unavailable, not invalid_token', async () => {
    const verifying = await warmVerifier();
    jwksMode = 'status';
    clock += 30_000;
    await expectUnavailable(verifying, await mint({ key: es2 }), 'jwks_status');
    await expect(verifying.verify(await mint())).resolves.toBeDefined();
  });

  it('I4 a JWKS that never answers is aborted at fetchTimeout; concurrent requests share one fetch', async () => {
    jwksMode = 'hang';
    const verifying = verifier({ fetchTimeout: 200 });
    const token = await mint();
    const errors = await Promise.all(Array.from({ length: 5 }, () => rejection(verifying.verify(token))));
    for (const error of errors) {
      expect(error.code).toBe('auth_unavailable');
      expect(error.reason).toBe('jwks_timeout');
    }
    expect(as.count(JWKS_PATH)).toBe(1);
  });

  it('I5 rotation: a new kid triggers one refresh and succeeds; a removed kid fails after refresh, even if cached', async () => {
    const verifying = await warmVerifier();
    const old = await mint({ claims: { exp: NOW_S + 3600 } });
    await verifying.verify(old);

    jwks = { keys: [es1.publicJwk, es2.publicJwk] };
    clock += 30_000;
    await expect(verifying.verify(await mint({ key: es2 }))).resolves.toBeDefined();
    await expect(verifying.verify(await mint({ key: es2, claims: { sub: 'user-2' } }))).resolves.toBeDefined();
    expect(as.count(JWKS_PATH)).toBe(2);

    jwks = { keys: [es2.publicJwk] };
    await expect(verifying.verify(old)).resolves.toBeDefined(); // the cached set is still fresh
    clock = T0 + JWKS_MAX_AGE_MS + 30_000;
    // Past max age the set at hand still answers once while the background fetch renews it (stale-while-revalidate).
    const renewal = nextRefresh();
    await expect(verifying.verify(old)).resolves.toBeDefined();
    await renewal;
    await expectInvalid(verifying, old, 'ERR_JWKS_NO_MATCHING_KEY');
    expect(as.count(JWKS_PATH)).toBe(3);
  });

  it('I5 a refresh that drops a key invalidates cached results at once, not at the next max-age', async () => {
    const verifying = await warmVerifier();
    const old = await mint({ claims: { exp: NOW_S + 3600 } });
    await verifying.verify(old);

    jwks = { keys: [es2.publicJwk] };
    clock += 30_000;
    await expect(verifying.verify(await mint({ key: es2 }))).resolves.toBeDefined();
    await expectInvalid(verifying, old, 'ERR_JWKS_NO_MATCHING_KEY');
  });

  it('I6 close() aborts an in-flight JWKS fetch', async () => {
    jwksMode = 'hang';
    const verifying = verifier({ fetchTimeout: 60_000 });
    const token = await mint();
    const requested = as.nextRequest(JWKS_PATH);
    const pending = rejection(verifying.verify(token));
    await requested;
    await verifying.close();
    expect((await pending).code).toBe('auth_unavailable');
  });

  it('I7 a random-kid flood fetches the JWKS at most once per cooldown', async () => {
    const verifying = await warmVerifier();
    clock += 30_000;
    for (let index = 0; index < 200; index += 1) {
      await expectInvalid(verifying, await mint({ key: es2, header: { kid: `random-${index}` } }));
    }
    expect(as.count(JWKS_PATH)).toBe(2);
  });
});

describe('K9 — a JWKS answer never makes things worse', () => {
  /** A key of the AS marked as an encryption key by its `alg` alone, as some servers publish them. */
  const encryptionOnly = (key: SigningKey, alg: string): JWK => ({ ...key.publicJwk, use: undefined, alg });
  /** Same coordinates as a real key, but not a point of the curve: parses as a JWK, fails to import. */
  const offCurve = (jwk: JWK, kid: string): JWK => ({ ...jwk, kid, y: base64url.encode(new Uint8Array(32).fill(7)) });

  const badAnswers: [string, () => unknown, string][] = [
    ['an empty key list', () => ({ keys: [] }), 'jwks_no_usable_keys'],
    ['only encryption keys', () => ({ keys: [{ ...es2.publicJwk, use: 'enc' }] }), 'jwks_no_usable_keys'],
    [
      'encryption keys marked only by alg (RSA-OAEP, ECDH-ES, ECDH-ES+A256KW)',
      () => ({ keys: [encryptionOnly(rs1, 'RSA-OAEP'), encryptionOnly(es1, 'ECDH-ES'), encryptionOnly(es2, 'ECDH-ES+A256KW')] }),
      'jwks_no_usable_keys',
    ],
    [
      'keys whose key_ops lack verify (none listed, encryption only)',
      () => ({ keys: [{ ...es2.publicJwk, use: undefined, key_ops: [] }, { ...rs1.publicJwk, use: undefined, key_ops: ['encrypt', 'wrapKey'] }] }),
      'jwks_no_usable_keys',
    ],
    [
      'signing keys only for algorithms the route does not allow (RS512 by alg, Ed25519 by key type)',
      () => ({ keys: [{ ...rs512.publicJwk, alg: 'RS512' }, ed.publicJwk] }),
      'jwks_no_usable_keys',
    ],
    ['keys that all fail to import (off the curve, RSA under 2048 bits)', () => ({ keys: [offCurve(es2.publicJwk, 'es-2'), { kty: 'RSA', kid: 'rs-x', n: 'AQAB', e: 'AQAB' }] }), 'jwks_no_usable_keys'],
    ['a key of an unknown type', () => ({ keys: [{ kty: 'XYZ', kid: 'x' }] }), 'jwks_no_usable_keys'],
    ['no keys member', () => ({ issuer: ISSUER }), 'jwks_invalid'],
    ['a JSON array', () => [], 'jwks_invalid'],
  ];

  it.each(badAnswers)('K9 %s replaces nothing: known keys keep verifying, the failure is counted with its reason', async (_case, answer, reason) => {
    const verifying = await warmVerifier();
    await verifying.verify(await mint());
    jwks = answer();
    clock += 30_000;
    // An unknown kid makes the verifier look again; the answer is refused, so the kid cannot be judged yet.
    await expectUnavailable(verifying, await mint({ key: es2 }), reason);
    expect(refreshes).toEqual(['success', reason]);
    // A fresh token (not in the result cache) under the kept key set.
    await expect(verifying.verify(await mint({ claims: { sub: 'user-2' } }))).resolves.toMatchObject({ subject: 'user-2' });
    expect(verifying.isReady()).toBe(true);
  });

  it('K9 routes on one JWKS location share its key set: a key counts while one of them allows its algorithm', async () => {
    const caches = createJwtVerifierCaches();
    jwks = { keys: [{ ...rs512.publicJwk, alg: 'RS512' }] };
    const esRoute = verifier({ algorithms: ['ES256'] }, { caches });
    const rsRoute = verifier({ algorithms: ['RS512'] }, { caches });
    await expect(rsRoute.verify(await mint({ key: rs512 }))).resolves.toMatchObject({ subject: 'user-1' });
    await rsRoute.close();
    // Only the ES256 route is left: the same answer has nothing it can verify with, so it is refused.
    clock += 30_000;
    await expectUnavailable(esRoute, await mint({ key: es2 }), 'jwks_no_usable_keys');
    expect(refreshes).toEqual(['success', 'jwks_no_usable_keys']);
  });

  it('K9 keys that fail to import are dropped; the rest of the answer is used', async () => {
    jwks = { keys: [offCurve(es1.publicJwk, 'broken'), es1.publicJwk] };
    const verifying = await warmVerifier();
    await expect(verifying.verify(await mint())).resolves.toBeDefined();
    await expectInvalid(verifying, await mint({ key: es1, header: { kid: 'broken' } }), 'ERR_JWKS_NO_MATCHING_KEY');
  });

  it('K9 a refused answer is logged once per reason, never with its body; the recovery once', async () => {
    const logs = captureLogs();
    const verifying = verifier({}, { logger: logs.logger });
    await verifying.warm();
    jwks = { keys: [], note: 'body-canary-2f9c' };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      clock += 30_000;
      await expectUnavailable(verifying, await mint({ key: es2 }), 'jwks_no_usable_keys');
    }
    jwks = { keys: [es1.publicJwk, es2.publicJwk] };
    clock += JWKS_RETRY_BACKOFF_MS;
    await expect(verifying.verify(await mint({ key: es2 }))).resolves.toBeDefined();
    const lines = logs.lines.map((line) => JSON.parse(line) as { level: number; msg: string; reason?: string });
    expect(lines.filter((line) => line.level === 40).map((line) => line.reason)).toEqual(['jwks_no_usable_keys']);
    expect(lines.filter((line) => line.msg === 'JWKS fetched again')).toHaveLength(1);
    expect(logs.text()).not.toContain('body-canary-2f9c');
  });

  it('K9 a slow JWKS endpoint never delays a request whose kid is known (renewed in the background)', async () => {
    const verifying = await warmVerifier({ fetchTimeout: 20_000 });
    jwksMode = 'hang';
    clock += JWKS_MAX_AGE_MS + 1;
    const fetching = as.nextRequest(JWKS_PATH);
    await expect(verifying.verify(await mint())).resolves.toMatchObject({ subject: 'user-1' });
    // Answered while the renewal is still waiting on the endpoint.
    expect(refreshes).toEqual(['success']);
    await fetching;
    expect(as.count(JWKS_PATH)).toBe(2);
  });

  describe('with the default jwks_cooldown', () => {
    const cooldown = (): number => compileJwtSettings(ISSUER, `{ issuer: ${ISSUER} }`).jwksCooldown;

    it('K9 a rotation the JWKS publishes late is accepted within 5 s, not after 30 s of 401s', async () => {
      const verifying = await warmVerifier({ jwksCooldown: cooldown() });
      // Tokens with the new kid arrive before the JWKS lists it (an AS replica restarted with a new key).
      clock += 10_000;
      await expectInvalid(verifying, await mint({ key: es2 }), 'ERR_JWKS_NO_MATCHING_KEY');
      expect(as.count(JWKS_PATH)).toBe(2);
      jwks = { keys: [es1.publicJwk, es2.publicJwk] };
      clock += 5_000;
      await expect(verifying.verify(await mint({ key: es2 }))).resolves.toBeDefined();
      expect(as.count(JWKS_PATH)).toBe(3);
    });

    it('K9 a flood of random kids over 20 s costs at most one fetch per cooldown', async () => {
      const verifying = await warmVerifier({ jwksCooldown: cooldown() });
      for (let index = 0; index < 200; index += 1) {
        clock += 100;
        await expectInvalid(verifying, await mint({ key: es2, header: { kid: `random-${index}` } }));
      }
      expect(as.count(JWKS_PATH) - 1).toBeLessThanOrEqual(20_000 / cooldown());
    });
  });

  it('K9 a start with the JWKS down: one warning, 503s without a fetch per request, recovery on the first request after it is back', async () => {
    jwksMode = 'status';
    const logs = captureLogs();
    const verifying = verifier({}, { logger: logs.logger });
    await verifying.warm();
    expect(verifying.isReady()).toBe(false);
    for (let request = 0; request < 5; request += 1) await expectUnavailable(verifying, await mint(), 'jwks_status');
    expect(as.count(JWKS_PATH)).toBe(1);
    clock += JWKS_RETRY_BACKOFF_MS;
    await expectUnavailable(verifying, await mint(), 'jwks_status');
    expect(as.count(JWKS_PATH)).toBe(2);

    jwksMode = 'ok';
    clock += JWKS_RETRY_BACKOFF_MS;
    await expect(verifying.verify(await mint())).resolves.toBeDefined();
    expect(verifying.isReady()).toBe(true);
    const lines = logs.lines.map((line) => JSON.parse(line) as { level: number; msg: string; reason?: string; issuer?: string });
    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ reason: 'jwks_status', issuer: ISSUER, msg: expect.stringContaining('503') as unknown });
    expect(lines.filter((line) => line.msg === 'JWKS fetched again')).toHaveLength(1);
  });
});

describe('K9/I7 — one fetch policy per JWKS location, across routes and reloads', () => {
  const NOTES = 'https://mcp.example.com/notes/mcp';
  let caches: JwtVerifierCaches;

  beforeEach(() => {
    caches = createJwtVerifierCaches();
  });

  /** A route on the default issuer and JWKS URL, its verifier built as a gateway builds them: with shared caches. */
  const route = (audience: string, logger?: Logger): TokenVerifier =>
    verifier({ audiences: [audience] }, { caches, ...(logger && { logger }) });

  it('K9/I7 two routes on one issuer under a random-kid flood: at most one JWKS fetch per cooldown in total', async () => {
    const [calc, notes] = [route(RESOURCE), route(NOTES)];
    await Promise.all([calc.warm(), notes.warm()]);
    expect(as.count(JWKS_PATH)).toBe(1);
    const floodMs = 200_000;
    for (let index = 0; index < 200; index += 1) {
      clock += floodMs / 200;
      const token = await mint({ key: es2, header: { kid: `random-${index}` } });
      await expectInvalid(index % 2 === 0 ? calc : notes, token, 'ERR_JWKS_NO_MATCHING_KEY');
    }
    expect(as.count(JWKS_PATH) - 1).toBeLessThanOrEqual(floodMs / settings().jwksCooldown);
  });

  it('K9/I7 a reload keeps the cooldown: the replacing verifier fetches nothing for unknown kids within it', async () => {
    const replaced = route(RESOURCE);
    await replaced.warm();
    clock += 1_000;
    // A reload builds the new runtime's verifiers before it closes the replaced ones.
    const replacing = route(RESOURCE);
    await replacing.warm();
    await replaced.close();
    await expectInvalid(replacing, await mint({ key: es2 }), 'ERR_JWKS_NO_MATCHING_KEY');
    expect(as.count(JWKS_PATH)).toBe(1);
    clock += settings().jwksCooldown;
    await expectInvalid(replacing, await mint({ key: es2 }), 'ERR_JWKS_NO_MATCHING_KEY');
    expect(as.count(JWKS_PATH)).toBe(2);
  });

  it('K9/I7 while the JWKS is down, routes on one issuer share the retry backoff and the outage is logged once', async () => {
    jwksMode = 'status';
    const logs = captureLogs();
    const [calc, notes] = [route(RESOURCE, logs.logger), route(NOTES, logs.logger)];
    await expectUnavailable(calc, await mint(), 'jwks_status');
    await expectUnavailable(notes, await mint({ claims: { aud: NOTES } }), 'jwks_status');
    expect(as.count(JWKS_PATH)).toBe(1);
    clock += JWKS_RETRY_BACKOFF_MS;
    await expectUnavailable(notes, await mint({ claims: { aud: NOTES } }), 'jwks_status');
    expect(as.count(JWKS_PATH)).toBe(2);
    const warnings = logs.lines.filter((line) => (JSON.parse(line) as { level: number }).level === 40);
    expect(warnings).toHaveLength(1);
  });

  it('I6 closing one route\'s verifier leaves the fetch it started to the other routes (one fetch for both)', async () => {
    let fetchStarted = (): void => undefined;
    const started = new Promise<void>((resolve) => (fetchStarted = resolve));
    let answer = (): void => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const held: typeof fetch = async (input, init) => {
      fetchStarted();
      await answered;
      return fetch(input, init);
    };
    const calc = verifier({}, { caches, fetch: held });
    const notes = verifier({ audiences: [NOTES] }, { caches, fetch: held });
    const calcVerifying = calc.verify(await mint());
    await started;
    const notesVerifying = notes.verify(await mint({ claims: { aud: NOTES } }));
    await calc.close();
    answer();
    await expect(notesVerifying).resolves.toMatchObject({ audience: [NOTES] });
    await expect(calcVerifying).resolves.toMatchObject({ audience: [RESOURCE] });
    expect(as.count(JWKS_PATH)).toBe(1);
  });
});

describe('discovery (jwks_uri absent)', () => {
  const discovered = (overrides: Partial<JwtSettings> = {}): TokenVerifier => verifier({ jwksUri: undefined, ...overrides });
  const paths = {
    rfc8414: '/.well-known/oauth-authorization-server/realms/mcp',
    oidcInserted: '/.well-known/openid-configuration/realms/mcp',
    oidcAppended: '/realms/mcp/.well-known/openid-configuration',
  };

  it('tries RFC 8414 then the OIDC forms in order and uses the first matching document', async () => {
    documents.set(paths.oidcAppended, { issuer: ISSUER, jwks_uri: JWKS_URL });
    const verifying = discovered();
    await verifying.warm();
    expect(verifying.isReady()).toBe(true);
    expect(as.requests).toEqual([paths.rfc8414, paths.oidcInserted, paths.oidcAppended, JWKS_PATH]);
    await expect(verifying.verify(await mint())).resolves.toBeDefined();
  });

  it('stops at the RFC 8414 document when it qualifies', async () => {
    for (const path of Object.values(paths)) documents.set(path, { issuer: ISSUER, jwks_uri: JWKS_URL });
    await discovered().warm();
    expect(as.requests).toEqual([paths.rfc8414, JWKS_PATH]);
  });

  it('skips a document whose issuer does not match exactly (and its jwks_uri)', async () => {
    documents.set(paths.rfc8414, { issuer: `${ISSUER}/`, jwks_uri: `${attacker.origin}/jwks` });
    documents.set(paths.oidcInserted, { issuer: ISSUER.toUpperCase(), jwks_uri: `${attacker.origin}/jwks` });
    documents.set(paths.oidcAppended, { issuer: ISSUER, jwks_uri: JWKS_URL });
    const verifying = discovered();
    await expect(verifying.verify(await mint())).resolves.toBeDefined();
    expect(attacker.requests).toEqual([]);
  });

  it.each([
    ['issuer mismatch everywhere', { issuer: 'https://evil.example.com', jwks_uri: JWKS_URL }],
    ['jwks_uri over http on a public host', { issuer: '', jwks_uri: 'http://jwks.example.com/keys' }],
    ['jwks_uri not a URL', { issuer: '', jwks_uri: 'not a url' }],
    ['no jwks_uri', { issuer: '' }],
  ])('%s → auth_unavailable (issuer_metadata_unavailable), no JWKS fetched', async (_name, document) => {
    for (const path of Object.values(paths)) {
      documents.set(path, { ...document, issuer: document.issuer === '' ? ISSUER : document.issuer });
    }
    const verifying = discovered();
    await verifying.warm();
    expect(verifying.isReady()).toBe(false);
    await expectUnavailable(verifying, await mint(), 'issuer_metadata_unavailable');
    expect(as.count(JWKS_PATH)).toBe(0);
  });

  it('a failed discovery is retried after the backoff', async () => {
    const verifying = discovered();
    const token = await mint();
    await expectUnavailable(verifying, token, 'issuer_metadata_unavailable');
    documents.set(paths.rfc8414, { issuer: ISSUER, jwks_uri: JWKS_URL });
    await expectUnavailable(verifying, token, 'issuer_metadata_unavailable');
    clock += JWKS_RETRY_BACKOFF_MS;
    await expect(verifying.verify(token)).resolves.toBeDefined();
  });
});
