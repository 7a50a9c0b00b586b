import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRouteVerifier, isJwtFrom } from '../../src/auth/route-verifier.js';
import { createMemoryStore } from '../../src/cache/memory-store.js';
import type { CompiledRoute } from '../../src/config/types.js';
import { compileOrThrow } from '../helpers/gateway.js';
import {
  active,
  inactive,
  startIntrospectionServer,
  type TestIntrospectionServer,
} from '../helpers/introspection-server.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { outcome } from '../helpers/outcome.js';

const PUBLIC = 'https://gw.example.test';
const RESOURCE = `${PUBLIC}/calc/mcp`;

let issuer: TestIssuer;
let as: TestIntrospectionServer;

beforeEach(async () => {
  issuer = await startTestIssuer();
  as = await startIntrospectionServer();
  as.respond((call) =>
    call.token?.startsWith('opaque')
      ? active({ iss: issuer.issuer, sub: 'bob', aud: [RESOURCE], exp: Math.floor(Date.now() / 1000) + 600 })
      : inactive,
  );
});

afterEach(async () => {
  await Promise.all([issuer.close(), as.close()]);
});

function route(tokens: string): CompiledRoute {
  const config = compileOrThrow(
    `
public_url: ${PUBLIC}
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: "http://127.0.0.1:9/mcp" }
    authorization_servers: [${issuer.issuer}]
    tokens:
${tokens}
`,
    { INTROSPECTION_SECRET: 'route-introspection-secret' },
  );
  const [compiled] = config.routes;
  if (!compiled) throw new Error('no route compiled');
  return compiled;
}

const jwtSection = () => `      jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] }`;
const introspectionSection = () =>
  `      introspection: { endpoint: ${as.endpoint.href}, client_id: gateway, client_secret: "\${env:INTROSPECTION_SECRET}" }`;

function verifierFor(compiled: CompiledRoute) {
  return createRouteVerifier(compiled, { store: createMemoryStore(), keySecret: randomBytes(32) });
}


const jwksFetches = (): number => issuer.hits.get('/jwks') ?? 0;

describe('route verifier with both jwt and introspection', () => {
  it('a JWT whose iss is the jwt issuer is verified locally: no introspection', async () => {
    const verifier = verifierFor(route(`${jwtSection()}\n${introspectionSection()}`));
    const jwt = await issuer.mint({ aud: RESOURCE });
    await expect(verifier.verify(jwt)).resolves.toMatchObject({ tokenKind: 'jwt' });
    expect(as.calls).toHaveLength(0);
    expect(jwksFetches()).toBeGreaterThan(0);
  });

  it('a forged JWT claiming the jwt issuer is refused by the JWT path, not sent to the AS', async () => {
    const verifier = verifierFor(route(`${jwtSection()}\n${introspectionSection()}`));
    const [header, payload] = (await issuer.mint({ aud: RESOURCE })).split('.');
    const forged = `${header}.${payload}.${randomBytes(64).toString('base64url')}`;
    expect(await outcome(verifier.verify(forged))).toBe('invalid_token');
    expect(as.calls).toHaveLength(0);
  });

  it('an opaque token is introspected, with the route resource as audience', async () => {
    const verifier = verifierFor(route(`${jwtSection()}\n${introspectionSection()}`));
    await expect(verifier.verify(`opaque${randomBytes(16).toString('hex')}`)).resolves.toMatchObject({
      tokenKind: 'introspection',
      subject: 'bob',
    });
    expect(as.calls).toHaveLength(1);
    expect(jwksFetches()).toBe(0);
  });

  it('a JWT from another issuer goes to introspection (which refuses it)', async () => {
    const verifier = verifierFor(route(`${jwtSection()}\n${introspectionSection()}`));
    const foreign = await issuer.mint({ aud: RESOURCE, iss: 'https://other-as.example.test' });
    expect(await outcome(verifier.verify(foreign))).toBe('invalid_token');
    expect(as.calls).toHaveLength(1);
  });

  it('is ready when every part is; warm and close reach both', async () => {
    const verifier = verifierFor(route(`${jwtSection()}\n${introspectionSection()}`));
    await verifier.warm();
    expect(verifier.isReady()).toBe(true);
    await expect(verifier.close()).resolves.toBeUndefined();
  });
});

describe('route verifier with one kind', () => {
  it('introspection only: even a JWT from a known issuer is introspected', async () => {
    const verifier = verifierFor(route(introspectionSection()));
    expect(await outcome(verifier.verify(await issuer.mint({ aud: RESOURCE })))).toBe('invalid_token');
    expect(as.calls).toHaveLength(1);
    expect(verifier.isReady()).toBe(true);
  });

  it('jwt only: an opaque token never reaches an AS', async () => {
    const verifier = verifierFor(route(jwtSection()));
    expect(await outcome(verifier.verify(`opaque${randomBytes(16).toString('hex')}`))).toBe('invalid_token');
    expect(as.calls).toHaveLength(0);
  });
});

describe('isJwtFrom', () => {
  it.each([
    ['three segments, no alg', `${b64({ typ: 'JWT' })}.${b64({ iss: 'https://i' })}.sig`, false],
    ['alg and matching iss', `${b64({ alg: 'ES256' })}.${b64({ iss: 'https://i' })}.sig`, true],
    ['alg and another iss', `${b64({ alg: 'ES256' })}.${b64({ iss: 'https://j' })}.sig`, false],
    ['header not JSON', `bm90IGpzb24.${b64({ iss: 'https://i' })}.sig`, false],
    ['two segments', `${b64({ alg: 'ES256' })}.${b64({ iss: 'https://i' })}`, false],
    ['opaque', 'abcdef0123456789', false],
  ])('%s → %s', (_case, token, expected) => {
    expect(isJwtFrom(token, 'https://i')).toBe(expected);
  });
});

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
