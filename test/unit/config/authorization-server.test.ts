import { exportJWK, generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';

let keys = '';

beforeAll(async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  keys = JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] });
});

const SECTION = `
authorization_server:
  signing_keys: \${env:AS_KEYS}
  sign_in:
    issuer: https://login.example.com/tenant/v2.0
    client_id: mcp-gateway
    client_secret: \${env:IDP_SECRET}
    scopes: [openid, email, profile]
  entitlements:
    - scopes: [mcp:tools]
    - scopes: [calc:write]
      when: { claim: groups, includes: calc-admins }
  registration:
    dynamic: true
    client_id_metadata_documents: true
  access_token_ttl: 10m
  refresh_token_ttl: 30d
`;

const ROUTE_WITHOUT_TOKENS = `
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: "http://127.0.0.1:9/mcp" }
    scopes_supported: [mcp:tools, calc:write]
`;

function messageAt(problems: readonly { path: string; message: string }[], path: string): string | undefined {
  return problems.find((problem) => problem.path === path)?.message;
}

function parse(yaml: string) {
  return parseConfig(`public_url: https://mcp.example.com\n${yaml}`, { env: { AS_KEYS: keys, IDP_SECRET: 'idp-secret' } });
}

describe('authorization_server', () => {
  it('makes the gateway the issuer of a route without tokens: JWT, aud = resource, its own keys, listed in the PRM', () => {
    const result = parse(SECTION + ROUTE_WITHOUT_TOKENS);
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const { authorizationServer, routes } = result.config;
    expect(authorizationServer?.issuer).toBe('https://mcp.example.com');
    expect(authorizationServer?.accessTokenTtl).toBe(600_000);
    expect(authorizationServer?.refreshTokenTtl).toBe(30 * 86_400_000);
    expect(authorizationServer?.entitlements[1]).toEqual({ scopes: ['calc:write'], when: { claim: 'groups', includes: 'calc-admins' } });
    const route = routes[0];
    expect(route?.usesGatewayAuthorizationServer).toBe(true);
    expect(route?.authorizationServers).toEqual(['https://mcp.example.com']);
    expect(route?.tokens.jwt).toMatchObject({
      issuer: 'https://mcp.example.com',
      audiences: ['https://mcp.example.com/calc/mcp'],
      strictAudience: true,
      requireTyp: true,
      algorithms: ['ES256'],
    });
    const published = route?.tokens.jwt?.localKeys?.keys[0];
    expect(published).toMatchObject({ kid: 'k1', kty: 'EC' });
    expect(published).not.toHaveProperty('d');
  });

  it('refuses a route without tokens when the gateway is no authorization server, naming the key', () => {
    const result = parse(ROUTE_WITHOUT_TOKENS);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(messageAt(result.problems, 'routes.0.tokens')).toContain('authorization_server');
  });

  it('still requires authorization_servers next to tokens', () => {
    const result = parse(`
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: "http://127.0.0.1:9/mcp" }
    tokens: { jwt: { issuer: https://as.example.com } }
`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(messageAt(result.problems, 'routes.0.authorization_servers')).toContain('required');
  });

  it('refuses signing keys that cannot sign, at their path', () => {
    const result = parseConfig(`public_url: https://mcp.example.com\n${SECTION}${ROUTE_WITHOUT_TOKENS}`, {
      env: { AS_KEYS: '{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}', IDP_SECRET: 'x' },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(messageAt(result.problems, 'authorization_server.signing_keys')).toContain('private key');
  });

  it('refuses a route where the authorization server answers', () => {
    const result = parse(`${SECTION}${ROUTE_WITHOUT_TOKENS.replace('/calc/mcp', '/oauth/mcp')}`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(messageAt(result.problems, 'routes.0.path')).toContain('/oauth/');
  });

  it('refuses an issuer on another origin and a sign-in without openid', () => {
    const result = parse(
      SECTION.replace('  signing_keys:', '  issuer: https://elsewhere.example.com\n  signing_keys:').replace('[openid, email, profile]', '[email]') +
        ROUTE_WITHOUT_TOKENS,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const paths = result.problems.map((problem) => problem.path);
    expect(paths).toEqual(expect.arrayContaining(['authorization_server.issuer', 'authorization_server.sign_in.scopes']));
  });

  it('refuses an entitlement condition without a test, at its path', () => {
    const result = parse(SECTION.replace('{ claim: groups, includes: calc-admins }', '{ claim: groups }') + ROUTE_WITHOUT_TOKENS);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((problem) => problem.path)).toContain('authorization_server.entitlements.1.when');
  });
});
