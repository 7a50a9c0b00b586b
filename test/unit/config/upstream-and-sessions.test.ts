import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { impliedScopes } from '../../../src/config/compile.js';
import { compiled, configWith, parseObject, problems } from './fixtures.js';

const ec256 = await generateKeyPair('ES256', { extractable: true });
const EC_JWK = JSON.stringify({ ...(await exportJWK(ec256.privateKey)), kid: 'gw-1' });
const EC_PEM = await exportPKCS8(ec256.privateKey);
const RSA_PEM = await exportPKCS8((await generateKeyPair('RS256', { extractable: true })).privateKey);
const env = { CLIENT_SECRET: 'client-secret-canary', EC_JWK, EC_PEM, RSA_PEM, INTROSPECTION_SECRET: 'x' };

const CLIENT_CREDENTIALS = {
  type: 'client_credentials',
  token_endpoint: 'https://as.upstream.example/token',
  client_id: 'gateway',
  client_secret: '${env:CLIENT_SECRET}',
};

function parse(edits: Record<string, unknown>) {
  return parseObject(configWith(edits), { env });
}

function messages(edits: Record<string, unknown>): string[] {
  return problems(parse(edits)).map((problem) => `${problem.path}: ${problem.message}`);
}

describe('upstream.auth: client_credentials and token_exchange', () => {
  it('compiles client_credentials with defaults (basic auth, no scope, 5 s timeout)', () => {
    const auth = compiled(parse({ 'routes.0.upstream.auth': CLIENT_CREDENTIALS })).routes[0]?.upstream.auth;
    expect(auth).toMatchObject({
      type: 'client_credentials',
      clientId: 'gateway',
      scopes: [],
      resource: undefined,
      audience: undefined,
      timeout: 5_000,
      clientAuth: { method: 'client_secret_basic' },
    });
    expect(auth?.type === 'client_credentials' && auth.tokenEndpoint.href).toBe('https://as.upstream.example/token');
    expect(JSON.stringify(auth)).not.toContain('client-secret-canary');
  });

  it('compiles token_exchange with private_key_jwt, scope, resource and audience', () => {
    const auth = compiled(
      parse({
        'routes.0.upstream.auth': {
          type: 'token_exchange',
          token_endpoint: 'https://as.upstream.example/token',
          client_id: 'gateway',
          private_key: '${env:EC_JWK}',
          scope: ['calc:read', 'calc:write'],
          resource: 'http://calc.internal:3000/mcp',
          audience: 'calc-api',
        },
      }),
    ).routes[0]?.upstream.auth;
    expect(auth).toMatchObject({
      type: 'token_exchange',
      scopes: ['calc:read', 'calc:write'],
      resource: 'http://calc.internal:3000/mcp',
      audience: 'calc-api',
      clientAuth: { method: 'private_key_jwt' },
    });
  });

  it.each([
    ['a list', ['calc:read', 'calc:write']],
    ['an OAuth space-separated string', 'calc:read calc:write'],
    ['a string with extra spaces', ' calc:read  calc:write '],
  ])('upstream.auth.scope may be %s', (_title, scope) => {
    for (const type of ['client_credentials', 'token_exchange']) {
      const auth = compiled(parse({ 'routes.0.upstream.auth': { ...CLIENT_CREDENTIALS, type, scope } })).routes[0]?.upstream.auth;
      expect(auth).toMatchObject({ type, scopes: ['calc:read', 'calc:write'] });
    }
  });

  it('names the offending scope of a space-separated string by its position', () => {
    expect(messages({ 'routes.0.upstream.auth': { ...CLIENT_CREDENTIALS, scope: 'calc:read calc"write' } })).toContain(
      'routes.0.upstream.auth.scope.1: must be an RFC 6749 scope token: visible ASCII without space, " or \\',
    );
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['neither secret nor key', { client_secret: undefined }, 'routes.0.upstream.auth.client_secret: exactly one of client_secret or private_key is required'],
    ['both secret and key', { private_key: '${env:EC_PEM}' }, 'routes.0.upstream.auth.client_secret: exactly one of client_secret or private_key is required'],
    ['a private key that is not one', { client_secret: undefined, private_key: 'not a key' }, 'routes.0.upstream.auth.private_key: must be a private key: a JWK (JSON with "d") or a PEM block'],
    ['a token endpoint with a query', { token_endpoint: 'https://as.upstream.example/token?x=1' }, 'routes.0.upstream.auth.token_endpoint: must not contain a query'],
    ['a token endpoint on the metadata service', { token_endpoint: 'https://169.254.169.254/token' }, 'routes.0.upstream.auth.token_endpoint: host is link-local or a cloud metadata endpoint'],
    ['J3 a plain-http token endpoint off loopback', { token_endpoint: 'http://as.upstream.example/token' }, 'routes.0.upstream.auth.token_endpoint: must use https (http is allowed only for loopback hosts, or with allow_insecure_http: true)'],
    ['an unknown key', { client_assertion: 'x' }, 'routes.0.upstream.auth.client_assertion: unknown key'],
  ])('rejects %s', (_title, change, expected) => {
    const auth = { ...CLIENT_CREDENTIALS, ...change };
    for (const key of Object.keys(auth)) if ((auth as Record<string, unknown>)[key] === undefined) delete (auth as Record<string, unknown>)[key];
    expect(messages({ 'routes.0.upstream.auth': auth })).toContain(expected);
  });

  it('accepts a PEM (RSA) private key for private_key_jwt', () => {
    const auth = { ...CLIENT_CREDENTIALS, client_secret: undefined, private_key: '${env:RSA_PEM}' };
    delete (auth as Record<string, unknown>).client_secret;
    expect(parse({ 'routes.0.upstream.auth': auth }).ok).toBe(true);
  });

  it('warns about literal client secrets and keys, never printing them', () => {
    const config = compiled(parse({ 'routes.0.upstream.auth': { ...CLIENT_CREDENTIALS, client_secret: 'literal-canary' } }));
    expect(config.warnings).toContain('routes.0.upstream.auth.client_secret: literal secret in config; prefer ${env:…} or ${file:…}');
    expect(config.warnings.join('\n')).not.toContain('literal-canary');
  });
});

describe('upstream.identity and signing_key', () => {
  it('defaults ttl to 60 s and the audience to the upstream origin; lowercases the header', () => {
    const config = compiled(parse({ 'routes.0.upstream.identity': { header: 'X-Gateway-Identity' }, signing_key: '${env:EC_PEM}' }));
    expect(config.routes[0]?.upstream.identity).toEqual({ header: 'x-gateway-identity', ttl: 60_000, audience: 'http://127.0.0.1:3000' });
    expect(config.signingKey?.reveal()).toBe(EC_PEM);
    expect(config.warnings).toEqual([]);
  });

  it('warns once when identity is asserted without a signing_key (a key per process)', () => {
    const config = compiled(parse({ 'routes.0.upstream.identity': { header: 'x-gateway-identity', audience: 'calc' } }));
    expect(config.warnings).toEqual([
      'signing_key: not set; identity assertions are signed with a key generated per process (set signing_key when running several replicas or restarting)',
    ]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a reserved identity header', { 'routes.0.upstream.identity': { header: 'Authorization' } }, 'routes.0.upstream.identity.header: "Authorization" is managed by the gateway and cannot be set'],
    ['the session header', { 'routes.0.upstream.identity': { header: 'mcp-session-id' } }, 'routes.0.upstream.identity.header: "mcp-session-id" is managed by the gateway and cannot be set'],
    ['a header name with a space', { 'routes.0.upstream.identity': { header: 'x identity' } }, 'routes.0.upstream.identity.header: must be an HTTP header name (RFC 9110 token characters)'],
    ['the static credential header', { 'routes.0.upstream.identity': { header: 'X-Key' }, 'routes.0.upstream.auth': { type: 'header', name: 'x-key', value: 'v' } }, 'routes.0.upstream.identity.header: must differ from upstream.auth.name'],
    ['an assertion lifetime over an hour', { 'routes.0.upstream.identity': { header: 'x-id', ttl: '2h' } }, 'routes.0.upstream.identity.ttl: must be at most 1h'],
    ['an RSA signing key (ES256 only)', { signing_key: '${env:RSA_PEM}' }, 'signing_key: must be a ES256 key (EC P-256)'],
    ['a signing key that is not a key', { signing_key: '{"kty":"EC"}' }, 'signing_key: must be a private key: a JWK (JSON with "d") or a PEM block'],
  ])('rejects %s', (_title, edits, expected) => {
    expect(messages(edits)).toContain(expected);
  });
});

describe('sessions, rate_limit and policy keys', () => {
  it('binds sessions by default with a 30 min idle TTL; no rate limit; nothing hidden', () => {
    const route = compiled(parse({})).routes[0];
    expect(route?.sessions).toEqual({ bind: true, idleTtl: 1_800_000 });
    expect(route?.rateLimit).toBeUndefined();
    expect(route?.policy.hideUnauthorized).toBe(false);
    expect(route?.policy.implies.size).toBe(0);
  });

  it('compiles sessions, rate_limit and hide_unauthorized', () => {
    const route = compiled(
      parse({
        'routes.0.sessions': { bind: false, idle_ttl: '5m' },
        'routes.0.rate_limit': { requests: 100, per: '1m' },
        'routes.0.policy.hide_unauthorized': true,
      }),
    ).routes[0];
    expect(route?.sessions).toEqual({ bind: false, idleTtl: 300_000 });
    expect(route?.rateLimit).toEqual({ requests: 100, per: 60_000 });
    expect(route?.policy.hideUnauthorized).toBe(true);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['zero requests', { 'routes.0.rate_limit': { requests: 0, per: '1m' } }, 'routes.0.rate_limit.requests: Too small: expected number to be >0'],
    ['a fractional request count', { 'routes.0.rate_limit': { requests: 1.5 } }, 'routes.0.rate_limit.requests: Invalid input: expected int, received number'],
    ['a sub-second period', { 'routes.0.rate_limit': { requests: 5, per: '10ms' } }, 'routes.0.rate_limit.per: must be at least 1s'],
    ['a sub-second idle TTL', { 'routes.0.sessions': { idle_ttl: '1ms' } }, 'routes.0.sessions.idle_ttl: must be at least 1s'],
    ['E3 an implied scope with a quote', { 'routes.0.policy.implies': { 'calc:admin': ['calc"write'] } }, 'routes.0.policy.implies.calc:admin.0: must be an RFC 6749 scope token: visible ASCII without space, " or \\'],
  ])('rejects %s', (_title, edits, expected) => {
    expect(messages(edits)).toContain(expected);
  });
});

describe('impliedScopes (policy.implies closure)', () => {
  it.each<[string, Record<string, string[]>, Record<string, string[]>]>([
    ['direct', { 'calc:admin': ['calc:write'] }, { 'calc:admin': ['calc:write'] }],
    ['transitive', { admin: ['write'], write: ['read'] }, { admin: ['write', 'read'], write: ['read'] }],
    ['a cycle ends, a scope never implies itself', { a: ['b'], b: ['a'] }, { a: ['b'], b: ['a'] }],
    ['a self-loop', { a: ['a', 'b'] }, { a: ['b'] }],
    ['a diamond lists each scope once', { a: ['b', 'c'], b: ['d'], c: ['d'] }, { a: ['b', 'c', 'd'], b: ['d'], c: ['d'] }],
  ])('%s', (_title, implies, expected) => {
    const closure = Object.fromEntries([...impliedScopes(implies)].map(([scope, implied]) => [scope, [...implied].sort()]));
    expect(closure).toEqual(Object.fromEntries(Object.entries(expected).map(([scope, implied]) => [scope, [...implied].sort()])));
  });
});
