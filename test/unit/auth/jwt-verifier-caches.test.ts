import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJwtVerifier, createJwtVerifierCaches, type JwtVerifierCaches } from '../../../src/auth/jwt-verifier.js';
import type { TokenVerifier } from '../../../src/decision/ports.js';
import type { JwtSettings } from '../../../src/config/types.js';
import { compileJwtSettings } from '../../helpers/gateway.js';
import { outcome } from '../../helpers/outcome.js';
import { startTestIssuer, type TestIssuer } from '../../helpers/issuer.js';

const RESOURCE = 'https://gw.example.test/calc/mcp';

let issuer: TestIssuer;
let caches: JwtVerifierCaches;
const open: TokenVerifier[] = [];

beforeEach(async () => {
  issuer = await startTestIssuer();
  caches = createJwtVerifierCaches();
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((verifier) => verifier.close()));
  await issuer.close();
});

function settings(jwt = `{ issuer: ${issuer.issuer}, jwks_uri: ${issuer.jwksUri}, algorithms: [ES256] }`): JwtSettings {
  return compileJwtSettings(issuer.issuer, jwt);
}

function verifier(jwt: JwtSettings): TokenVerifier {
  const created = createJwtVerifier(jwt, { caches });
  open.push(created);
  return created;
}

const jwksFetches = (): number => issuer.hits.get('/jwks') ?? 0;

describe('JWT verifier caches shared across verifiers (K8)', () => {
  it('K8 a verifier for the same JWKS location starts with its keys: ready, no fetch, verifying while the JWKS is down', async () => {
    const before = verifier(settings());
    await before.warm();
    issuer.setJwksDown(true);
    const after = verifier(settings());
    await after.warm();
    expect(after.isReady()).toBe(true);
    await expect(after.verify(await issuer.mint({ aud: RESOURCE }))).resolves.toMatchObject({ tokenKind: 'jwt' });
    expect(jwksFetches()).toBe(1);
  });

  it('K8 identical settings share verified tokens; any changed setting verifies afresh', async () => {
    const token = await issuer.mint({ aud: RESOURCE });
    const before = verifier(settings());
    await before.warm();
    const first = await before.verify(token);
    expect(await verifier(settings()).verify(token)).toBe(first);
    const tolerant = settings(`{ issuer: ${issuer.issuer}, jwks_uri: ${issuer.jwksUri}, algorithms: [ES256], clock_tolerance: 10s }`);
    const again = await verifier(tolerant).verify(token);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('K8 another JWKS location starts empty and fails closed until its keys load', async () => {
    await verifier(settings()).warm();
    issuer.setJwksDown(true);
    const discovered = verifier(settings(`{ issuer: ${issuer.issuer}, algorithms: [ES256] }`));
    await discovered.warm();
    expect(discovered.isReady()).toBe(false);
    expect(await outcome(discovered.verify(await issuer.mint({ aud: RESOURCE })))).toBe('auth_unavailable');
  });

  it('once every verifier holding them closed, the caches are gone: the next one fetches again', async () => {
    const only = verifier(settings());
    await only.warm();
    await only.close();
    await verifier(settings()).warm();
    expect(jwksFetches()).toBe(2);
  });
});
