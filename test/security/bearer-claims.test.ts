import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { active, startIntrospectionServer, type TestIntrospectionServer } from '../helpers/introspection-server.js';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';

/**
 * K3: a sender-constrained token (cnf) presented as Bearer → 401 invalid_token. K4: a token naming neither subject
 * nor client → 401 invalid_token. Both for JWTs and for introspected tokens.
 */

const PUBLIC = 'https://gw.example.test';
const JWT_MCP = `${PUBLIC}/jwt/mcp`;
const OPAQUE_MCP = `${PUBLIC}/opaque/mcp`;
let introspection: TestIntrospectionServer;
/** What the introspection endpoint answers per opaque token. */
const answers = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  introspection = await startIntrospectionServer();
  introspection.respond((call) => active({ aud: [OPAQUE_MCP], exp: Math.floor(Date.now() / 1000) + 300, ...answers.get(call.token ?? '') }));
});

afterAll(() => introspection.close());

const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('jwt', target)}
  - name: opaque
    path: /opaque/mcp
    upstream: { url: ${target.upstream.url} }
    authorization_servers: [${target.issuer.issuer}]
    tokens: { introspection: { endpoint: ${introspection.endpoint.href}, client_id: gw, client_secret: s } }
`);

async function call(path: string, token: string): Promise<Response> {
  return fetch(`${stack.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
}

async function expectInvalidToken(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  expect(await response.json()).toMatchObject({ error: 'invalid_token' });
  expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  expect(stack.upstream.requests).toHaveLength(0);
}

const CONFIRMATIONS = [
  ['DPoP jkt', { jkt: '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I' }],
  ['mTLS x5t#S256', { 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' }],
  ['a confirmation method the gateway does not know', { jwk: { kty: 'EC' } }],
  ['an empty cnf object', {}],
] as const;

describe('K3 sender-constrained tokens are not bearer tokens', () => {
  it.each(CONFIRMATIONS)('K3 JWT with cnf (%s) → 401 invalid_token', async (_name, cnf) => {
    await expectInvalidToken(await call('/jwt/mcp', await stack.issuer.mint({ aud: JWT_MCP, cnf })));
  });

  it.each(CONFIRMATIONS)('K3 introspection answer with cnf (%s) → 401 invalid_token', async (name, cnf) => {
    const token = `bound-${name.replace(/\W/g, '')}`;
    answers.set(token, { sub: 'alice', cnf });
    await expectInvalidToken(await call('/opaque/mcp', token));
  });

  it('control: the same tokens without cnf are accepted', async () => {
    expect((await call('/jwt/mcp', await stack.issuer.mint({ aud: JWT_MCP }))).status).toBe(200);
    answers.set('unbound', { sub: 'alice' });
    expect((await call('/opaque/mcp', 'unbound')).status).toBe(200);
    stack.upstream.requests.length = 0;
  });
});

describe('K4 no anonymous principal', () => {
  it.each([
    ['no sub, no client_id, no azp', { sub: undefined, client_id: undefined }],
    ['empty sub and client_id', { sub: '', client_id: '' }],
    ['empty sub, client_id and azp', { sub: '', client_id: '', azp: '' }],
  ])('K4 JWT with %s → 401 invalid_token', async (_name, claims) => {
    await expectInvalidToken(await call('/jwt/mcp', await stack.issuer.mint({ aud: JWT_MCP, ...claims })));
  });

  it('K4 introspection answer naming no sub, client_id or username → 401 invalid_token', async () => {
    answers.set('anonymous', {});
    await expectInvalidToken(await call('/opaque/mcp', 'anonymous'));
  });

  it.each([
    ['an empty username', { username: '' }],
    ['an empty username, sub and client_id', { username: '', sub: '', client_id: '' }],
  ])('K4 introspection answer with %s → 401 invalid_token, not the shared principal "username:"', async (name, claims) => {
    const token = `empty-${name.replace(/\W/g, '')}`;
    answers.set(token, claims);
    await expectInvalidToken(await call('/opaque/mcp', token));
  });

  it.each([
    ['sub only', { sub: 'alice', client_id: undefined }],
    ['azp only (a client)', { sub: undefined, client_id: undefined, azp: 'ci-bot' }],
    ['empty sub and client_id next to an azp', { sub: '', client_id: '', azp: 'ci-bot' }],
  ])('K4 control: a JWT with %s is a principal', async (_name, claims) => {
    expect((await call('/jwt/mcp', await stack.issuer.mint({ aud: JWT_MCP, ...claims }))).status).toBe(200);
  });

  it.each([
    ['username alone', { username: 'bob' }],
    ['username next to an empty sub', { sub: '', username: 'bob' }],
  ])('K4 control: an introspection answer with %s is a principal', async (name, claims) => {
    const token = `named-${name.replace(/\W/g, '')}`;
    answers.set(token, claims);
    expect((await call('/opaque/mcp', token)).status).toBe(200);
  });
});
