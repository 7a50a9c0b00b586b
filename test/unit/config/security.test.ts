import { describe, expect, it } from 'vitest';
import { INTROSPECTION, compiled, configWith, minimalConfig, parseObject, problems } from './fixtures.js';

const SCOPE_MESSAGE = 'must be an RFC 6749 scope token: visible ASCII without space, " or \\';
const HTTPS_MESSAGE = 'must use https (http is allowed only for loopback hosts, or with allow_insecure_http: true)';
const INTERNAL_HOST = 'host is link-local or a cloud metadata endpoint';

describe('E3 scopes that could break a WWW-Authenticate challenge are rejected at load', () => {
  it.each([
    ['a double quote', 'mcp:"tools'],
    ['a backslash', 'mcp:\\tools'],
    ['a space', 'mcp:tools mcp:admin'],
    ['non-ASCII', 'mcp:tööls'],
    ['a control character', 'mcp:\ttools'],
    ['nothing', ''],
  ])('E3 scope with %s', (_title, scope) => {
    for (const [key, path] of [
      ['routes.0.scopes_supported', 'routes.0.scopes_supported.0'],
      ['routes.0.policy.scopes', 'routes.0.policy.scopes.0'],
      ['routes.0.policy.tools', 'routes.0.policy.tools.add.0'],
      ['routes.0.policy.prompts', 'routes.0.policy.prompts.greet.0'],
    ] as const) {
      const value = key.endsWith('tools') ? { add: [scope] } : key.endsWith('prompts') ? { greet: [scope] } : [scope];
      expect(problems(parseObject(configWith({ [key]: value })))).toEqual([{ path, message: SCOPE_MESSAGE }]);
    }
  });

  it('E3 accepts every RFC 6749 scope-token character', () => {
    const scope = '!#$%&\'()*+,-./09:;<=>?@AZ[]^_`az{|}~';
    const edits = { 'routes.0.scopes_supported': [scope], 'routes.0.policy.scopes': [scope] };
    const config = compiled(parseObject(configWith(edits)));
    expect(config.routes[0]?.scopesSupported).toEqual([scope]);
  });
});

describe('E8 hostile authorization_servers entries are rejected', () => {
  it.each([
    ['userinfo', 'https://user:pw@as.example.com', 'must not contain userinfo (user:password@)'],
    ['a fragment', 'https://as.example.com/realm#x', 'must not contain a fragment'],
    ['a query', 'https://as.example.com/realm?x=1', 'must not contain a query'],
    ['javascript:', 'javascript:alert(1)', 'scheme "javascript:" is not allowed; use https'],
    ['data:', 'data:text/html,<script>', 'scheme "data:" is not allowed; use https'],
    ['file:', 'file:///etc/passwd', 'scheme "file:" is not allowed; use https'],
    ['a relative URL', '/realms/mcp', 'must be an absolute URL'],
    ['$(…)', 'https://as.example.com/$(id)', 'must not contain spaces, quotes, backslashes or shell metacharacters'],
    ['a backtick', 'https://as.example.com/`id`', 'must not contain spaces, quotes, backslashes or shell metacharacters'],
    ['a pipe', 'https://as.example.com/a|calc.exe', 'must not contain spaces, quotes, backslashes or shell metacharacters'],
    ['a semicolon', 'https://as.example.com/a;id', 'must not contain spaces, quotes, backslashes or shell metacharacters'],
    ['an ampersand', 'https://as.example.com/a&id', 'must not contain spaces, quotes, backslashes or shell metacharacters'],
    ['a space', 'https://as.example.com/a b', 'must not contain spaces, quotes, backslashes or shell metacharacters'],
    ['a quote', 'https://as.example.com/a"b', 'must not contain spaces, quotes, backslashes or shell metacharacters'],
    ['a non-normal host', 'https://AS.example.com', 'is not in normal form; write "https://as.example.com/"'],
  ])('E8 entry with %s', (_title, url, message) => {
    for (const allowInsecure of [false, true]) {
      const config = configWith({
        allow_insecure_http: allowInsecure,
        'routes.0.authorization_servers': ['https://ok.example.com', url],
      });
      expect(problems(parseObject(config))).toEqual([{ path: 'routes.0.authorization_servers.1', message }]);
    }
  });

  it('E8 entry over http to a remote host is rejected unless allow_insecure_http is set', () => {
    const config = configWith({ 'routes.0.authorization_servers': ['http://as.example.com'] });
    expect(problems(parseObject(config))).toEqual([{ path: 'routes.0.authorization_servers.0', message: HTTPS_MESSAGE }]);
    const insecure = compiled(parseObject({ ...config, allow_insecure_http: true }));
    expect(insecure.routes[0]?.authorizationServers).toEqual(['http://as.example.com']);
  });

  it.each(['http://127.0.0.1:9000', 'http://127.8.9.10', 'http://localhost:9000', 'http://[::1]:9000', 'http://a.localhost'])(
    'E8 entry over http to loopback %s is accepted',
    (url) => {
      const config = compiled(parseObject(configWith({ 'routes.0.authorization_servers': [url] })));
      expect(config.routes[0]?.authorizationServers).toEqual([url]);
    },
  );
});

describe('J3 fetched URLs never point at link-local or metadata hosts', () => {
  const fields = [
    ['routes.0.authorization_servers', (url: string) => [url], 'routes.0.authorization_servers.0'],
    ['routes.0.tokens.jwt.issuer', (url: string) => url, 'routes.0.tokens.jwt.issuer'],
    ['routes.0.tokens.jwt.jwks_uri', (url: string) => url, 'routes.0.tokens.jwt.jwks_uri'],
    ['routes.0.tokens.introspection', (url: string) => ({ ...INTROSPECTION, endpoint: url }),
      'routes.0.tokens.introspection.endpoint'],
    ['routes.0.tokens.introspection', (url: string) => ({ ...INTROSPECTION, issuer: url }),
      'routes.0.tokens.introspection.issuer'],
  ] as const;

  it.each([
    'http://169.254.169.254/latest/meta-data',
    'https://169.254.0.1',
    'http://[fe80::1]',
    'http://[febf::1]',
    'http://[::ffff:a9fe:a9fe]',
    'http://metadata.google.internal/computeMetadata/v1',
    'https://metadata.google.internal./x',
    'http://metadata',
    'http://100.100.100.200/latest',
    'http://[fd00:ec2::254]',
  ])('J3 %s is rejected in every fetched field, even with allow_insecure_http', (url) => {
    for (const [key, value, path] of fields) {
      for (const allowInsecure of [false, true]) {
        const config = configWith({ allow_insecure_http: allowInsecure, [key]: value(url) });
        expect(problems(parseObject(config))).toEqual([{ path, message: INTERNAL_HOST }]);
      }
    }
  });

  it('J3 an IPv4 address written as a number is not in normal form', () => {
    const config = configWith({ 'routes.0.tokens.jwt.jwks_uri': 'https://2852039166/' });
    expect(problems(parseObject(config))).toEqual([
      { path: 'routes.0.tokens.jwt.jwks_uri', message: 'is not in normal form; write "https://169.254.169.254/"' },
    ]);
  });

  it('J3 http to a remote JWKS or introspection endpoint needs allow_insecure_http', () => {
    const config = configWith({
      'routes.0.tokens.jwt.jwks_uri': 'http://as.example.com/jwks',
      'routes.0.tokens.introspection': { ...INTROSPECTION, endpoint: 'http://as.example.com/introspect' },
    });
    expect(problems(parseObject(config))).toEqual([
      { path: 'routes.0.tokens.jwt.jwks_uri', message: HTTPS_MESSAGE },
      { path: 'routes.0.tokens.introspection.endpoint', message: HTTPS_MESSAGE },
    ]);
    expect(compiled(parseObject({ ...config, allow_insecure_http: true })).allowInsecureHttp).toBe(true);
  });

  it('J3 the upstream may use http to any host and is not checked for internal hosts', () => {
    const config = compiled(parseObject(configWith({ 'routes.0.upstream.url': 'http://calc.default.svc:3000/mcp' })));
    expect(config.routes[0]?.upstream.url.href).toBe('http://calc.default.svc:3000/mcp');
  });
});

describe('J2 semantically bad configs are rejected', () => {
  const route = (minimalConfig().routes as Record<string, unknown>[])[0];
  it.each<[string, Record<string, unknown>, string, string]>([
    ['issuer without https', { 'routes.0.tokens.jwt.issuer': 'http://as.example.com' }, 'routes.0.tokens.jwt.issuer',
      HTTPS_MESSAGE],
    ['public_url without https', { public_url: 'http://gw.example.com' }, 'public_url', HTTPS_MESSAGE],
    ['resource without https', { 'routes.0.resource': 'http://gw.example.com/calc' }, 'routes.0.resource', HTTPS_MESSAGE],
    ['resource with a fragment', { 'routes.0.resource': 'https://gw.example.com/calc#frag' }, 'routes.0.resource',
      'must not contain a fragment'],
    ['public_url with a fragment', { public_url: 'https://gw.example.com/#x' }, 'public_url', 'must not contain a fragment'],
    ['public_url with userinfo', { public_url: 'https://u@gw.example.com' }, 'public_url',
      'must not contain userinfo (user:password@)'],
    ['empty authorization_servers', { 'routes.0.authorization_servers': [] }, 'routes.0.authorization_servers',
      'at least one authorization server is required'],
    ['duplicate paths', { routes: [route, { ...route, name: 'other' }] }, 'routes.1.path',
      'duplicate path "/calc/mcp" (also routes.0)'],
    ['scope with a double quote', { 'routes.0.scopes_supported': ['a"b'] }, 'routes.0.scopes_supported.0', SCOPE_MESSAGE],
  ])('J2 %s', (_title, edits, path, message) => {
    expect(problems(parseObject(configWith(edits)))).toEqual([{ path, message }]);
  });

  it.each(['http://127.0.0.1:8080', 'http://localhost:8080', 'http://[::1]:8080'])(
    'J2 loopback public_url %s is accepted',
    (url) => {
      expect(compiled(parseObject(configWith({ public_url: url }))).routes[0]?.resource).toBe(`${url}/calc/mcp`);
    },
  );
});
