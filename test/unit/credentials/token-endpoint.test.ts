import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/config/secret.js';
import type { TokenEndpointSettings } from '../../../src/config/types.js';
import { createTokenRequester, createTokenRevoker } from '../../../src/credentials/token-endpoint.js';
import { json, startIntrospectionServer, type TestIntrospectionServer } from '../../helpers/introspection-server.js';

const SECRET = 'client-secret-canary-31aa';
let endpoint: TestIntrospectionServer;

function settings(overrides: Partial<TokenEndpointSettings> = {}): TokenEndpointSettings {
  return {
    tokenEndpoint: new URL('/token', endpoint.endpoint),
    clientId: 'gateway',
    clientAuth: { method: 'client_secret_basic', clientSecret: new Secret(SECRET) },
    scopes: [],
    resource: 'https://mcp.vendor.example/mcp',
    audience: undefined,
    timeout: 1_000,
    ...overrides,
  };
}

beforeAll(async () => {
  endpoint = await startIntrospectionServer();
});

afterAll(async () => {
  await endpoint.close();
});

beforeEach(() => {
  endpoint.calls.length = 0;
});

describe('token endpoint client: authorization code and refresh answers', () => {
  it('a public client (no secret) names itself in the form and sends no Authorization header', async () => {
    endpoint.respond(() => json({ access_token: 'at', token_type: 'Bearer' }));
    await createTokenRequester(settings({ clientAuth: { method: 'none' } }))({ grant_type: 'authorization_code', code: 'c', code_verifier: 'v' });
    const [call] = endpoint.calls;
    expect(call?.authorization).toBeUndefined();
    expect(Object.fromEntries(call?.form ?? [])).toEqual({
      grant_type: 'authorization_code',
      code: 'c',
      code_verifier: 'v',
      resource: 'https://mcp.vendor.example/mcp',
      client_id: 'gateway',
    });
  });

  it('reads refresh_token, scope and id_token when the answer carries them', async () => {
    endpoint.respond(() => json({ access_token: 'at', token_type: 'bearer', expires_in: 60, refresh_token: 'rt-2', scope: 'notes:read', id_token: 'a.b.c' }));
    expect(await createTokenRequester(settings())({ grant_type: 'refresh_token', refresh_token: 'rt-1' })).toEqual({
      ok: true,
      token: { accessToken: 'at', expiresInMs: 60_000, refreshToken: 'rt-2', scope: 'notes:read', idToken: 'a.b.c' },
    });
  });

  it.each([
    ['without access_token', { token_type: 'Bearer' }, 'malformed'],
    ['with token_type DPoP', { access_token: 'at', token_type: 'DPoP' }, 'unsupported_token_type'],
    ['with a refresh_token that could split a header', { access_token: 'at', token_type: 'Bearer', refresh_token: 'a b' }, 'malformed'],
    ['with a non-string scope', { access_token: 'at', token_type: 'Bearer', scope: ['notes:read'] }, 'malformed'],
  ])('an answer %s is refused (%s)', async (_title, answer, failure) => {
    endpoint.respond(() => json(answer));
    expect(await createTokenRequester(settings())({ grant_type: 'authorization_code', code: 'c' })).toEqual({ ok: false, failure });
  });
});

describe('token revocation (RFC 7009)', () => {
  it('posts the token and its type hint with the client authentication; 200 is success', async () => {
    endpoint.respond(() => ({ status: 200, body: '' }));
    const revoke = createTokenRevoker(settings());
    expect(await revoke(new URL('/revoke', endpoint.endpoint), 'rt-1', 'refresh_token')).toBe(true);
    expect(Object.fromEntries(endpoint.calls[0]?.form ?? [])).toEqual({ token: 'rt-1', token_type_hint: 'refresh_token' });
    expect(endpoint.calls[0]?.authorization).toMatch(/^Basic /);
  });

  it('a refusal or no answer is false, never an exception', async () => {
    endpoint.respond(() => json({ error: 'unsupported_token_type' }, 400));
    const revoke = createTokenRevoker(settings());
    expect(await revoke(new URL('/revoke', endpoint.endpoint), 'at', 'access_token')).toBe(false);
    endpoint.respond(() => 'reset');
    expect(await revoke(new URL('/revoke', endpoint.endpoint), 'at', 'access_token')).toBe(false);
  });
});
