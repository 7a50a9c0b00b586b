import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { INTROSPECTION, compiled, configWith, minimalConfig, parseObject, problems } from './fixtures.js';

/** An EC P-256 private key as a JWK, for private_key_jwt client authentication. */
const PRIVATE_KEY = JSON.stringify(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }));

const ROUTE = (minimalConfig().routes as Record<string, unknown>[])[0] ?? {};

function routes(...overrides: Record<string, unknown>[]): Record<string, unknown> {
  return configWith({ routes: overrides.map((override) => ({ ...ROUTE, ...override })) });
}

describe('schema rules', () => {
  it.each<[string, Record<string, unknown>, string, string | RegExp]>([
    ['port above 65535', { 'listen.port': 65_536 }, 'listen.port', /<=65535/],
    ['unknown log level', { 'log.level': 'loud' }, 'log.level', /expected one of "fatal"/],
    ['zero body limit', { 'limits.max_body_bytes': 0 }, 'limits.max_body_bytes', /expected number to be >0/],
    ['non-integer token limit', { 'limits.max_token_bytes': 1.5 }, 'limits.max_token_bytes', /expected int/],
    ['redis URL of another scheme', { 'cache.redis_url': 'http://redis:6379', 'cache.key_secret': 'k'.repeat(32) },
      'cache.redis_url', 'must be a redis:// or rediss:// URL'],
    ['redis without key secret', { 'cache.redis_url': 'redis://redis:6379' }, 'cache.key_secret',
      'is required when redis_url is set'],
    ['short key secret', { 'cache.key_secret': 'k'.repeat(31) }, 'cache.key_secret', 'must be at least 32 characters'],
    ['no routes', { routes: [] }, 'routes', 'at least one route is required'],
    ['uppercase route name', { 'routes.0.name': 'Calc' }, 'routes.0.name', 'must match ^[a-z0-9][a-z0-9_-]{0,62}$'],
    ['route name starting with "-"', { 'routes.0.name': '-calc' }, 'routes.0.name', /must match/],
    ['route name of 64 characters', { 'routes.0.name': 'a'.repeat(64) }, 'routes.0.name', /must match/],
    ['relative path', { 'routes.0.path': 'calc/mcp' }, 'routes.0.path', 'must start with "/"'],
    ['path with query', { 'routes.0.path': '/calc?x=1' }, 'routes.0.path', 'must not contain a query'],
    ['path with fragment', { 'routes.0.path': '/calc#x' }, 'routes.0.path', 'must not contain a fragment'],
    ['percent-encoded path', { 'routes.0.path': '/calc/%2e%2e' }, 'routes.0.path',
      'may contain only letters, digits and - . _ ~ + , = : @ /'],
    ['path with a space', { 'routes.0.path': '/calc mcp' }, 'routes.0.path', /^may contain only/],
    ['path with a shell metacharacter', { 'routes.0.path': '/calc$(id)' }, 'routes.0.path', /^may contain only/],
    ['path with non-ASCII', { 'routes.0.path': '/cälc' }, 'routes.0.path', /^may contain only/],
    ['path with "//"', { 'routes.0.path': '/calc//mcp' }, 'routes.0.path', 'must not contain "//"'],
    ['path with ".."', { 'routes.0.path': '/calc/../mcp' }, 'routes.0.path', 'must not contain "." or ".." segments'],
    ['path with "."', { 'routes.0.path': '/calc/./mcp' }, 'routes.0.path', 'must not contain "." or ".." segments'],
    ['path with trailing slash', { 'routes.0.path': '/calc/' }, 'routes.0.path', 'must not end with "/"'],
    ['path under /.well-known/', { 'routes.0.path': '/.well-known/mcp' }, 'routes.0.path',
      'must not be under "/.well-known/"'],
    ['path /.well-known', { 'routes.0.path': '/.well-known' }, 'routes.0.path', 'must not be under "/.well-known/"'],
    ['K16 path /healthz', { 'routes.0.path': '/healthz' }, 'routes.0.path', /^is one of the gateway's own paths/],
    ['K16 path /readyz', { 'routes.0.path': '/readyz' }, 'routes.0.path', /^is one of the gateway's own paths/],
    ['K16 path /metrics', { 'routes.0.path': '/metrics' }, 'routes.0.path', /^is one of the gateway's own paths/],
    ['K16 path /.well-known/jwks.json', { 'routes.0.path': '/.well-known/jwks.json' }, 'routes.0.path', 'must not be under "/.well-known/"'],
    ['resource with uppercase host', { 'routes.0.resource': 'https://GW.example.com/calc' }, 'routes.0.resource',
      'is not in normal form; write "https://gw.example.com/calc"'],
    ['resource with default port', { 'routes.0.resource': 'https://gw.example.com:443/calc' }, 'routes.0.resource',
      'is not in normal form; write "https://gw.example.com/calc"'],
    ['resource with query', { 'routes.0.resource': 'https://gw.example.com/calc?v=1' }, 'routes.0.resource',
      'must not contain a query'],
    ['documentation URL of another scheme', { 'routes.0.resource_documentation': 'ftp://docs.example.com' },
      'routes.0.resource_documentation', 'scheme "ftp:" is not allowed; use https'],
    ['upstream URL of another scheme', { 'routes.0.upstream.url': 'ws://calc:3000/mcp' }, 'routes.0.upstream.url',
      'scheme "ws:" is not allowed; use https'],
    ['upstream URL with credentials', { 'routes.0.upstream.url': 'http://user:pw@calc:3000/mcp' },
      'routes.0.upstream.url', 'must not contain userinfo (user:password@)'],
    ['upstream URL with query', { 'routes.0.upstream.url': 'http://calc:3000/mcp?key=1' }, 'routes.0.upstream.url',
      'must not contain a query'],
    ['unknown upstream auth type', { 'routes.0.upstream.auth': { type: 'basic' } }, 'routes.0.upstream.auth.type',
      /Expected 'none' \| 'bearer' \| 'header'/],
    ['bearer without token', { 'routes.0.upstream.auth': { type: 'bearer' } }, 'routes.0.upstream.auth.token',
      'is required'],
    ['bearer token with a space', { 'routes.0.upstream.auth': { type: 'bearer', token: 'a b' } },
      'routes.0.upstream.auth.token', 'must be visible ASCII without spaces or line breaks'],
    ['header value with a line break', { 'routes.0.upstream.auth': { type: 'header', name: 'X-Key', value: 'a\r\nb' } },
      'routes.0.upstream.auth.value', 'must be visible ASCII without line breaks or surrounding whitespace'],
    ['header name with a space', { 'routes.0.upstream.auth': { type: 'header', name: 'X Key', value: 'v' } },
      'routes.0.upstream.auth.name', 'must be an HTTP header name (RFC 9110 token characters)'],
    ['unparseable duration', { 'routes.0.upstream.timeouts.connect': '5 s' }, 'routes.0.upstream.timeouts.connect',
      'must be a number of seconds or a duration like 500ms, 30s, 5m, 1h'],
    ['duration in weeks', { 'routes.0.upstream.timeouts.headers': '1w' }, 'routes.0.upstream.timeouts.headers',
      'must be a number of seconds or a duration like 500ms, 30s, 5m, 1h'],
    ['negative duration', { 'routes.0.upstream.timeouts.body_idle': -1 }, 'routes.0.upstream.timeouts.body_idle',
      'must be a number of seconds or a duration like 500ms, 30s, 5m, 1h'],
    ['zero connect timeout', { 'routes.0.upstream.timeouts.connect': 0 }, 'routes.0.upstream.timeouts.connect',
      'must be at least 1ms'],
    ['duration beyond the timer limit', { 'routes.0.tokens.jwt.jwks_stale_window': '1000h' },
      'routes.0.tokens.jwt.jwks_stale_window', 'must be at most 2147483647ms'],
    ['clock tolerance above 5m', { 'routes.0.tokens.jwt.clock_tolerance': '6m' }, 'routes.0.tokens.jwt.clock_tolerance',
      'must be at most 5m'],
    ['no authorization server', { 'routes.0.authorization_servers': [] }, 'routes.0.authorization_servers',
      'at least one authorization server is required'],
    ['offline_access advertised', { 'routes.0.scopes_supported': ['mcp:tools', 'offline_access'] },
      'routes.0.scopes_supported.1', 'offline_access must not be advertised by a protected resource'],
    ['no token validation', { 'routes.0.tokens': {} }, 'routes.0.tokens',
      'at least one of jwt or introspection is required'],
    ['missing tokens', { 'routes.0.tokens': undefined }, 'routes.0.tokens',
      'is required unless the top-level authorization_server section makes the gateway issue the tokens'],
    ['missing issuer', { 'routes.0.tokens.jwt': {} }, 'routes.0.tokens.jwt.issuer', 'is required'],
    ['HS256', { 'routes.0.tokens.jwt.algorithms': ['HS256'] }, 'routes.0.tokens.jwt.algorithms.0',
      /\(HS\* and none are never accepted\)$/],
    ['alg none', { 'routes.0.tokens.jwt.algorithms': ['RS256', 'none'] }, 'routes.0.tokens.jwt.algorithms.1',
      /never accepted/],
    ['empty algorithm list', { 'routes.0.tokens.jwt.algorithms': [] }, 'routes.0.tokens.jwt.algorithms', /expected array/],
    ['unknown introspection auth method',
      { 'routes.0.tokens.introspection': { ...INTROSPECTION, auth_method: 'private_key_jwt' } },
      'routes.0.tokens.introspection.auth_method', /expected one of "client_secret_basic"\|"client_secret_post"/],
    ['empty audience list', { 'routes.0.tokens.jwt.audience': [] }, 'routes.0.tokens.jwt.audience', 'must name at least one audience'],
    ['empty audience in a list', { 'routes.0.tokens.jwt.audience': ['api://calc', ''] }, 'routes.0.tokens.jwt.audience.1', 'must not be empty'],
    ['introspection with client_secret and private_key',
      { 'routes.0.tokens.introspection': { ...INTROSPECTION, private_key: PRIVATE_KEY } },
      'routes.0.tokens.introspection.private_key', 'at most one of client_secret or private_key'],
    ['introspection private_key that is no key',
      { 'routes.0.tokens.introspection': { endpoint: INTROSPECTION.endpoint, client_id: 'gateway', private_key: 'not a key' } },
      'routes.0.tokens.introspection.private_key', 'must be a private key: a JWK (JSON with "d") or a PEM block'],
    ['accept_missing_iss without an expected issuer',
      { 'routes.0.tokens': { introspection: { ...INTROSPECTION, accept_missing_iss: true } } },
      'routes.0.tokens.introspection.accept_missing_iss',
      'needs an expected issuer (tokens.introspection.issuer or tokens.jwt.issuer): without one `iss` is not checked at all'],
    ['origin list mixing "*"', { 'routes.0.cors.allowed_origins': ['*', 'https://app.example.com'] },
      'routes.0.cors.allowed_origins', 'must be exactly ["*"] or a list of origins'],
    ['origin with a path', { 'routes.0.cors.allowed_origins': ['https://app.example.com/'] },
      'routes.0.cors.allowed_origins.0', 'must be exactly scheme://host[:port]; write "https://app.example.com"'],
    ['origin with default port', { 'routes.0.cors.allowed_origins': ['https://app.example.com:443'] },
      'routes.0.cors.allowed_origins.0', 'must be exactly scheme://host[:port]; write "https://app.example.com"'],
    ['origin of another scheme', { 'routes.0.cors.allowed_origins': ['chrome-extension://abc'] },
      'routes.0.cors.allowed_origins.0', 'must be an http or https origin'],
    ['empty origin list', { 'routes.0.cors.allowed_origins': [] }, 'routes.0.cors.allowed_origins', /expected array/],
    ['negative max_age', { 'routes.0.cors.max_age': -1 }, 'routes.0.cors.max_age', /expected number to be >=0/],
  ])('%s', (_title, edits, path, message) => {
    const expected = typeof message === 'string' ? message : (expect.stringMatching(message) as unknown);
    expect(problems(parseObject(configWith(edits)))).toEqual([{ path, message: expected }]);
  });

  it.each(['/', '/mcp', '/calc/v1.2/mcp', '/a_b-c~d/e+f,g=h:i@j'])('accepts the route path %s', (path) => {
    expect(compiled(parseObject(configWith({ 'routes.0.path': path }))).routes[0]?.path).toBe(path);
  });

  it.each(['Authorization', 'proxy-authorization', 'Host', 'Cookie', 'Connection', 'Transfer-Encoding', 'Upgrade', 'TE',
    'Content-Length', 'Mcp-Session-Id'])('refuses the managed header %s as upstream credential', (name) => {
    expect(problems(parseObject(configWith({ 'routes.0.upstream.auth': { type: 'header', name, value: 'v' } })))).toEqual([
      { path: 'routes.0.upstream.auth.name', message: `"${name}" is managed by the gateway and cannot be set` },
    ]);
  });

  it('accepts a custom header credential and lowercases CORS origins', () => {
    const config = compiled(parseObject(configWith({
      'routes.0.upstream.auth': { type: 'header', name: 'X-Api-Key', value: 'v a l' },
      'routes.0.cors.allowed_origins': ['https://App.Example.com', 'http://localhost:6274'],
    })));
    const route = config.routes[0];
    expect(route?.upstream.auth).toMatchObject({ type: 'header', name: 'X-Api-Key' });
    expect(route?.cors.anyOrigin).toBe(false);
    expect([...(route?.cors.allowedOrigins ?? [])]).toEqual(['https://app.example.com', 'http://localhost:6274']);
  });
});

describe('cross-key rules', () => {
  it.each<[string, Record<string, unknown>, { path: string; message: string }[]]>([
    ['duplicate name', routes({}, { path: '/other' }),
      [{ path: 'routes.1.name', message: 'duplicate name "calc" (also routes.0)' }]],
    ['duplicate path, reported once', routes({}, { name: 'other' }),
      [{ path: 'routes.1.path', message: 'duplicate path "/calc/mcp" (also routes.0)' }]],
    ['duplicate resource', routes(
      { resource: 'https://api.example.com/mcp' },
      { name: 'other', path: '/other', resource: 'https://api.example.com/mcp' },
    ), [{ path: 'routes.1.resource', message: 'duplicate resource "https://api.example.com/mcp" (also routes.0)' }]],
    ['resource equal to another route\'s default resource', routes(
      {},
      { name: 'other', path: '/other', resource: 'https://gw.example.com/calc/mcp' },
    ), [{ path: 'routes.1.resource', message: 'duplicate resource "https://gw.example.com/calc/mcp" (also routes.0)' }]],
    ['two resources with one metadata path', routes(
      { resource: 'https://a.example.com/mcp' },
      { name: 'other', path: '/other', resource: 'https://b.example.com/mcp' },
    ), [{
      path: 'routes.1.resource',
      message: 'duplicate metadata path "/.well-known/oauth-protected-resource/mcp" (also routes.0)',
    }]],
    ['trailing slash giving the same metadata path', routes(
      { resource: 'https://gw.example.com/mcp' },
      { name: 'other', path: '/other', resource: 'https://gw.example.com/mcp/' },
    ), [{
      path: 'routes.1.resource',
      message: 'duplicate metadata path "/.well-known/oauth-protected-resource/mcp" (also routes.0)',
    }]],
    ['K1 resource policy key that is not a URI', routes({ policy: { resources: { 'secret.txt': ['s'] } } }),
      [{ path: 'routes.0.policy.resources.secret.txt', message: 'must be an absolute URI (scheme:...)' }]],
    ['K1 two resource policy keys naming one resource', routes({ policy: { resources: { 'file:///a': ['s'], 'FILE://localhost/a': ['t'] } } }),
      [{ path: 'routes.0.policy.resources.FILE://localhost/a', message: 'names the same resource as "file:///a" (both normalise to "file:///a")' }]],
    ['K1 two resource policy keys differing only in query and userinfo', routes({ policy: { resources: { 'https://h/x?v=1': ['s'], 'https://u@h/x?v=2': ['t'] } } }),
      [{ path: 'routes.0.policy.resources.https://u@h/x?v=2', message: 'names the same resource as "https://h/x?v=1" (both normalise to "https://h/x")' }]],
    ['K2 URI template as a resource policy key (it would not cover the resources it expands to)',
      routes({ policy: { resources: { 'notes://{id}': ['s'], 'file:///docs/{+path}': ['t'], 'file:///a': ['u'] } } }),
      ['notes://{id}', 'file:///docs/{+path}'].map((uri) => ({
        path: `routes.0.policy.resources.${uri}`,
        message:
          'is a URI template: keys are exact URIs, so the resources it expands to (resources/read of each) would not be covered; ' +
          'list each resource URI, or require a scope of resources/read in policy.methods',
      }))],
    ['K1 resource policy key with an encoded slash', routes({ policy: { resources: { 'file:///a%2Fb': ['s'] } } }),
      [{
        path: 'routes.0.policy.resources.file:///a%2Fb',
        message: "must not hold an encoded '/', '\\' or NUL (%2F, %5C, %00) or a '\\' in its host or path: servers resolve those differently",
      }]],
    ['two default routes', routes({ default: true }, { name: 'other', path: '/other', default: true }),
      [{ path: 'routes.1.default', message: 'only one route may be default (also routes.0)' }]],
    ['default route while another owns the root metadata path', routes(
      { resource: 'https://gw.example.com/' },
      { name: 'other', path: '/other', default: true },
    ), [{
      path: 'routes.1.default',
      message: '/.well-known/oauth-protected-resource is already the metadata path of routes.0',
    }]],
  ])('%s', (_title, config, expected) => {
    expect(problems(parseObject(config))).toEqual(expected);
  });
});

describe('warnings', () => {
  it('warns about policy scopes missing from scopes_supported, once per key and scope', () => {
    const config = compiled(parseObject(configWith({
      'routes.0.scopes_supported': ['mcp:tools'],
      'routes.0.policy': {
        scopes: ['mcp:tools', 'mcp:admin'],
        tools: { multiply: ['mcp:tools', 'calc:write', 'calc:write'] },
        methods: { 'resources/list': ['res:list'] },
        resources: { 'file:///a': ['res:read'] },
        prompts: { greet: ['prompt:use'] },
      },
    })));
    expect(config.warnings).toEqual([
      'routes.0.policy.scopes: scope "mcp:admin" is not in scopes_supported',
      'routes.0.policy.tools.multiply: scope "calc:write" is not in scopes_supported',
      'routes.0.policy.methods.resources/list: scope "res:list" is not in scopes_supported',
      'routes.0.policy.resources.file:///a: scope "res:read" is not in scopes_supported',
      'routes.0.policy.prompts.greet: scope "prompt:use" is not in scopes_supported',
    ]);
    expect(config.routes[0]?.policy.tools.get('multiply')).toEqual(['mcp:tools', 'calc:write', 'calc:write']);
    expect(config.routes[0]?.policy.methods.get('resources/list')).toEqual(['res:list']);
  });

  it('C8 warns when two routes accept one audience from the same issuer (a token for either is good on both)', () => {
    const jwt = { issuer: 'https://as.example.com', audience: ['api://calc', 'https://gw.example.com/other'] };
    const config = compiled(parseObject(routes({ tokens: { jwt } }, { name: 'other', path: '/other', tokens: { jwt: { issuer: 'https://as.example.com' } } })));
    expect(config.warnings).toEqual([
      'routes.0.tokens.jwt.audience: "https://gw.example.com/other" is also accepted by routes.1 from the same issuer: a token for either route is good on both',
    ]);
    const twice = compiled(parseObject(routes({ tokens: { jwt } }, { name: 'other', path: '/other', tokens: { jwt } })));
    expect(twice.warnings).toEqual([
      'routes.1.tokens.jwt.audience: "api://calc" is also accepted by routes.0 from the same issuer: a token for either route is good on both',
      'routes.1.tokens.jwt.audience: "https://gw.example.com/other" is also accepted by routes.0 from the same issuer: a token for either route is good on both',
    ]);
    const otherIssuer = { issuer: 'https://other-as.example.com', audience: 'api://calc' };
    expect(compiled(parseObject(routes({ tokens: { jwt } }, { name: 'other', path: '/other', tokens: { jwt: otherIssuer } }))).warnings).toEqual([]);
  });

  it('warns loudly when allow_insecure_http is on', () => {
    const config = compiled(parseObject(configWith({ allow_insecure_http: true })));
    expect(config.warnings).toEqual(['allow_insecure_http: true permits plain http to remote hosts; development only']);
  });
});
