import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { describe, expect, it } from 'vitest';
import { addressPolicy } from '../../../src/client/address-policy.js';
import type { CheckStatus } from '../../../src/client/check.js';
import type { AuthorizationServerFound, Discovery } from '../../../src/client/discovery.js';
import { authorizationServerChecks, resourceMetadataChecks, usableAuthorizationServer } from '../../../src/client/discovery-checks.js';

const url = new URL('https://gw.example.com/calc/mcp');
const issuer = 'https://auth.example.com/realms/mcp';
/** What a run from the public `url` may contact, and how it judges discovered endpoints. */
const publicRun = { legacy: false, addresses: addressPolicy(url, false) };
const legacyRun = { ...publicRun, legacy: true };

function metadata(overrides: Partial<AuthorizationServerMetadata> = {}): AuthorizationServerMetadata {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
    ...overrides,
  };
}

function server(overrides: Partial<AuthorizationServerMetadata> = {}, found: Partial<AuthorizationServerFound> = {}): AuthorizationServerFound {
  return { server: issuer, metadata: metadata(overrides), metadataUrl: 'https://auth.example.com/.well-known/oauth-authorization-server/realms/mcp', tried: [], ...found };
}

function discovery(document: Record<string, unknown> = {}, source: 'header' | 'path' | 'root' = 'header'): Discovery {
  return {
    url,
    resourceMetadata: {
      document: { resource: url.href, authorization_servers: [issuer], ...document },
      url: 'https://gw.example.com/.well-known/oauth-protected-resource/calc/mcp',
      source,
    },
    resourceMetadataTried: source === 'root' ? [{ url: 'https://gw.example.com/.well-known/oauth-protected-resource/calc/mcp', outcome: 'HTTP 404' }] : [],
    legacy: false,
    authorizationServers: [server()],
    addresses: publicRun.addresses,
  };
}

function statuses(checks: readonly { id: string; status: CheckStatus }[]): Record<string, CheckStatus> {
  return Object.fromEntries(checks.map((check) => [check.id, check.status]));
}

describe('protected resource metadata checks (RFC 9728)', () => {
  it.each<[string, string, CheckStatus]>([
    ['the same URL', url.href, 'pass'],
    ['the same URL in upper case', 'HTTPS://GW.EXAMPLE.COM/calc/mcp', 'pass'],
    ['the same URL with the default port', 'https://gw.example.com:443/calc/mcp', 'pass'],
    ['a path prefix on the same origin', 'https://gw.example.com/calc', 'fail'],
    ['the origin', 'https://gw.example.com', 'fail'],
    ['another path', 'https://gw.example.com/notes/mcp', 'fail'],
    ['another host', 'https://evil.example.com/calc/mcp', 'fail'],
    ['http instead of https', 'http://gw.example.com/calc/mcp', 'fail'],
    ['a longer path', 'https://gw.example.com/calc/mcp/v2', 'fail'],
    ['not a URL', 'calc', 'fail'],
  ])('resource: %s → %s', (_name, resource, status) => {
    expect(statuses(resourceMetadataChecks(discovery({ resource }))).resource).toBe(status);
  });

  it('G5: a same-origin prefix fails, saying the official SDK tolerates it but RFC 9728 §3.3 requires identity', () => {
    const check = resourceMetadataChecks(discovery({ resource: 'https://gw.example.com/calc' })).find(({ id }) => id === 'resource');
    expect(check).toMatchObject({ status: 'fail', spec: 'RFC 9728 §3.3, RFC 8707 §2' });
    expect(check?.message).toContain('RFC 9728 §3.3 requires the two to be identical');
    expect(check?.message).toContain('the official SDK tolerates a same-origin prefix');
  });

  it.each<[string, Record<string, unknown>, Record<string, CheckStatus>]>([
    ['no authorization_servers', { authorization_servers: undefined }, { 'authorization-servers': 'fail' }],
    ['empty authorization_servers', { authorization_servers: [] }, { 'authorization-servers': 'fail' }],
    ['offline_access in scopes_supported', { scopes_supported: ['mcp:tools', 'offline_access'] }, { 'scopes-supported': 'warn' }],
    ['no scopes_supported', {}, { 'scopes-supported': 'pass' }],
  ])('%s', (_name, document, expected) => {
    expect(statuses(resourceMetadataChecks(discovery(document)))).toMatchObject(expected);
  });

  it('found at the root only after path shape A failed: warn, naming what was tried', () => {
    const [found] = resourceMetadataChecks(discovery({}, 'root'));
    expect(found).toMatchObject({ id: 'resource-metadata', status: 'warn' });
    expect(found?.message).toContain('the root (shape B), after https://gw.example.com/.well-known/oauth-protected-resource/calc/mcp (HTTP 404)');
  });

  it('none found: fail, with the 2025-03-26 fallback named', () => {
    const checks = resourceMetadataChecks({ ...discovery(), resourceMetadata: undefined, legacy: true, resourceMetadataTried: [{ url: 'https://gw.example.com/x', outcome: 'HTTP 404' }] });
    expect(checks).toEqual([expect.objectContaining({ id: 'resource-metadata', status: 'fail' })]);
    expect(checks[0]?.message).toContain('fall back to https://gw.example.com/');
  });
});

describe('authorization server checks (RFC 8414, PKCE, https)', () => {
  it.each<[string, AuthorizationServerFound, Record<string, CheckStatus>]>([
    ['all right', server(), { 'as-metadata': 'pass', 'as-issuer': 'pass', 'as-pkce': 'pass', 'as-https': 'pass' }],
    ['issuer with a trailing slash added', server({ issuer: `${issuer}/` }), { 'as-issuer': 'fail' }],
    ['issuer of another host', server({ issuer: 'https://login.example.net/mcp' }), { 'as-issuer': 'fail' }],
    ['S256 absent, plain present', server({ code_challenge_methods_supported: ['plain'] }), { 'as-pkce': 'fail' }],
    ['code_challenge_methods_supported empty', server({ code_challenge_methods_supported: [] }), { 'as-pkce': 'fail' }],
    ['code_challenge_methods_supported missing', server({ code_challenge_methods_supported: undefined }), { 'as-pkce': 'fail' }],
    ['an http token endpoint off loopback', server({ token_endpoint: 'http://auth.example.com/token' }), { 'as-https': 'fail' }],
    ['http on loopback', server({ issuer: 'http://127.0.0.1:9000', authorization_endpoint: 'http://127.0.0.1:9000/auth', token_endpoint: 'http://localhost:9000/token' }, { server: 'http://127.0.0.1:9000' }), { 'as-https': 'pass', 'as-issuer': 'pass' }],
    ['no metadata found', server({}, { metadata: undefined, tried: [{ url: 'https://auth.example.com/.well-known/oauth-authorization-server/realms/mcp', outcome: 'HTTP 404' }] }), { 'as-metadata': 'fail', 'as-https': 'pass' }],
  ])('%s', (_name, found, expected) => {
    expect(statuses(authorizationServerChecks(found, publicRun))).toEqual(expect.objectContaining(expected));
  });

  it('2025-03-26 fallback without metadata: warnings (default endpoints), not failures', () => {
    const checks = statuses(authorizationServerChecks(server({}, { server: 'https://gw.example.com/', metadata: undefined }), legacyRun));
    expect(checks).toEqual({ 'as-metadata': 'warn', 'as-pkce': 'warn', 'as-https': 'pass' });
  });

  it.each<[string, Partial<AuthorizationServerMetadata>, string]>([
    ['a token endpoint on a loopback literal', { token_endpoint: 'http://127.0.0.1:9000/token' }, 'refused 127.0.0.1: a loopback address'],
    ['an authorization endpoint on the cloud metadata address', { authorization_endpoint: 'http://169.254.169.254/authorize' }, 'refused 169.254.169.254: a link-local address'],
    ['a registration endpoint on a private address in hex', { registration_endpoint: 'https://0xa000001/register' }, 'refused 10.0.0.1: a private address'],
    ['a jwks_uri on an IPv4-mapped IPv6 loopback', { jwks_uri: 'https://[::ffff:127.0.0.1]/jwks' }, 'refused [::ffff:7f00:1]: a loopback address'],
    ['a token endpoint on localhost with a trailing dot', { token_endpoint: 'https://localhost./token' }, 'refused localhost.: a loopback name'],
  ])('discovered by a public deployment, %s fails as-addresses, so no client uses the server', (_name, overrides, message) => {
    const found = server(overrides);
    const addressCheck = authorizationServerChecks(found, publicRun).find((check) => check.id === 'as-addresses');
    expect(addressCheck).toMatchObject({ status: 'fail', message: expect.stringContaining(message) as unknown });
    expect(usableAuthorizationServer({ ...discovery(), authorizationServers: [found] })).toBeUndefined();
  });

  it('a local deployment may name endpoints on other non-public hosts: no as-addresses check', () => {
    const local = { legacy: false, addresses: addressPolicy(new URL('http://127.0.0.1:8080/mcp'), false) };
    expect(authorizationServerChecks(server({ token_endpoint: 'https://10.0.0.1/token' }), local).map((check) => check.id)).not.toContain('as-addresses');
  });

  it('a client uses the first server, in the metadata order, without a failing check', () => {
    const bad = server({ code_challenge_methods_supported: ['plain'] });
    const good = server({ issuer: 'https://other.example.com' }, { server: 'https://other.example.com' });
    expect(usableAuthorizationServer({ ...discovery(), authorizationServers: [bad, good] })).toBe(good);
    expect(usableAuthorizationServer({ ...discovery(), authorizationServers: [bad] })).toBeUndefined();
  });
});
