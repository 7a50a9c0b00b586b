import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, parseConfig } from '../../../src/config/load.js';
import { INTROSPECTION, compiled, configWith, minimalConfig, parseObject, problems } from './fixtures.js';

const EXAMPLE = fileURLToPath(new URL('../../../config/example.yaml', import.meta.url));

describe('defaults', () => {
  it('fills every optional key of a minimal config', () => {
    const config = compiled(parseObject(minimalConfig()));
    const route = config.routes[0];
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(config.publicUrl.href).toBe('https://gw.example.com/');
    expect(config.allowInsecureHttp).toBe(false);
    expect(config.logLevel).toBe('info');
    expect(config.limits).toEqual({ maxBodyBytes: 1_048_576, maxTokenBytes: 8192, bodyTimeout: 30_000, headerTimeout: 10_000, maxStreamsPerPrincipal: 64, maxConcurrentRequestsPerPrincipal: 256 });
    expect(config.trustedProxies.none).toBe(true);
    expect(config.decision).toBeUndefined();
    expect(config.cache).toEqual({
      redisUrl: undefined,
      keySecret: undefined,
      keyPrefix: 'mcpgw:',
      commandTimeout: 150,
      memory: {
        sessions: 100_000,
        grants: 20_000,
        consent_links: 10_000,
        consent_flows: 10_000,
        introspection: 50_000,
        introspection_negative: 10_000,
        upstream_tokens: 20_000,
        dpop_proofs: 100_000,
        rate_limits: 50_000,
      },
    });
    expect(config.warnings).toEqual([]);
    expect(route).toMatchObject({
      name: 'calc',
      path: '/calc/mcp',
      resource: 'https://gw.example.com/calc/mcp',
      isDefault: true,
      scopesSupported: [],
      resourceName: undefined,
      resourceDocumentation: undefined,
      upstream: { auth: { type: 'none' }, connectTimeout: 5_000, headersTimeout: 30_000, bodyIdleTimeout: 0 },
      tokens: {
        jwt: {
          issuer: 'https://as.example.com',
          jwksUri: undefined,
          algorithms: ['RS256', 'ES256'],
          audiences: ['https://gw.example.com/calc/mcp'],
          strictAudience: false,
          clockTolerance: 30_000,
          requireTyp: false,
          maxLifetime: 86_400_000,
          jwksStaleWindow: 600_000,
          jwksCooldown: 5_000,
          fetchTimeout: 5_000,
        },
        introspection: undefined,
      },
      policy: { scopes: [] },
      cors: { anyOrigin: true, maxAge: 600 },
    });
    expect(route?.upstream.url.href).toBe('http://127.0.0.1:3000/mcp');
    expect(route?.cors.allowedOrigins.size).toBe(0);
    expect(route?.policy.tools.size).toBe(0);
  });

  it('fills introspection defaults and takes its issuer from tokens.jwt.issuer', () => {
    const config = compiled(parseObject(configWith({ 'routes.0.tokens.introspection': INTROSPECTION })));
    expect(config.routes[0]?.tokens.introspection).toMatchObject({
      clientId: 'gateway',
      authMethod: 'client_secret_basic',
      issuer: 'https://as.example.com',
      acceptMissingAudience: false,
      acceptMissingIssuer: false,
      privateKey: undefined,
      timeout: 3_000,
      clockTolerance: 30_000,
      maxTtl: 60_000,
      negativeTtl: 10_000,
    });
    expect(config.routes[0]?.tokens.introspection?.clientSecret?.reveal()).toBe('introspection-secret');
  });

  it('drops a trailing slash of public_url', () => {
    const config = compiled(parseObject(configWith({ public_url: 'https://gw.example.com/base/' })));
    expect(config.routes[0]?.resource).toBe('https://gw.example.com/base/calc/mcp');
  });
});

describe('strict keys', () => {
  const introspection = { 'routes.0.tokens.introspection': INTROSPECTION };
  it.each([
    ['', {}],
    ['listen', {}],
    ['log', {}],
    ['limits', {}],
    ['cache', {}],
    ['routes.0', {}],
    ['routes.0.upstream', {}],
    ['routes.0.upstream.auth', { 'routes.0.upstream.auth': { type: 'none' } }],
    ['routes.0.upstream.auth', { 'routes.0.upstream.auth': { type: 'bearer', token: 't' } }],
    ['routes.0.upstream.auth', { 'routes.0.upstream.auth': { type: 'header', name: 'X-Key', value: 'v' } }],
    ['routes.0.upstream.timeouts', {}],
    ['routes.0.tokens', {}],
    ['routes.0.tokens.jwt', {}],
    ['routes.0.tokens.introspection', introspection],
    ['routes.0.tokens.introspection.cache', introspection],
    ['routes.0.policy', {}],
    ['routes.0.cors', {}],
  ])('rejects an unknown key under "%s"', (at, edits) => {
    const key = at === '' ? 'bogus' : `${at}.bogus`;
    expect(problems(parseObject(configWith({ ...edits, [key]: 1 })))).toEqual([{ path: key, message: 'unknown key' }]);
  });

  it('reports a missing required key as required', () => {
    expect(problems(parseObject(configWith({ public_url: undefined, 'routes.0.name': undefined })))).toEqual([
      { path: 'public_url', message: 'is required' },
      { path: 'routes.0.name', message: 'is required' },
    ]);
  });
});

describe('file-level problems', () => {
  it('reports a YAML syntax error with its line and no path', () => {
    const result = parseConfig('public_url: https://gw.example.com\nroutes: [\nlisten: {}\n', { source: 'gw.yaml' });
    const [first] = problems(result);
    expect(first?.path).toBe('');
    expect(first?.message).toMatch(/^YAML syntax error in gw\.yaml at line 3, column \d+: /);
  });

  it('never quotes the offending source text, which may be a literal secret', () => {
    const result = parseConfig('cache:\n  key_secret: s3cr3t-value\n  s3cr3t-tail 1\n');
    const messages = problems(result).map((problem) => problem.message);
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.join('\n')).not.toContain('s3cr3t');
  });

  it('rejects duplicate keys', () => {
    expect(problems(parseConfig('public_url: a\npublic_url: b\n'))[0]?.message).toMatch(/line 2.*unique/);
  });

  it('reports an unresolved alias', () => {
    expect(problems(parseConfig('public_url: *nope\n'))).toEqual([
      { path: '', message: expect.stringMatching(/^YAML (syntax )?error/) as unknown },
    ]);
  });

  it.each([[''], ['[]'], ['just a string']])('rejects a document that is not a mapping: %j', (text) => {
    expect(problems(parseConfig(text))[0]?.path).toBe('');
  });

  it('reports a config file that cannot be read', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'mcpgw-config-')), 'absent.yaml');
    await expect(loadConfigFile(missing)).resolves.toEqual({
      ok: false,
      problems: [{ path: '', message: `cannot read config file ${missing} (ENOENT)` }],
    });
  });

  it('loads a file from disk', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mcpgw-config-')), 'gw.yaml');
    writeFileSync(file, 'public_url: https://gw.example.com\nroutes: []\n');
    await expect(loadConfigFile(file)).resolves.toEqual({
      ok: false,
      problems: [{ path: 'routes', message: 'at least one route is required' }],
    });
  });
});

describe('every problem at once', () => {
  it('reports all schema problems of one file together', () => {
    const result = parseObject(
      configWith({
        'listen.port': 70_000,
        'log.level': 'loud',
        'routes.0.name': 'Calc',
        'routes.0.path': 'calc',
        'routes.0.scopes_supported': ['a b'],
        'routes.0.tokens.jwt.algorithms': ['HS256'],
      }),
    );
    expect(problems(result).map((problem) => problem.path)).toEqual([
      'listen.port',
      'log.level',
      'routes.0.name',
      'routes.0.path',
      'routes.0.scopes_supported.0',
      'routes.0.tokens.jwt.algorithms.0',
    ]);
  });

  it('reports all cross-key problems of one file together', () => {
    const route = minimalConfig().routes as Record<string, unknown>[];
    const second = { ...route[0], default: true, tokens: { jwt: { issuer: 'http://as.example.com' } } };
    const third = { ...route[0], name: 'other', path: '/other', default: true };
    const result = parseObject(configWith({ routes: [route[0], second, third] }));
    expect(problems(result)).toEqual([
      { path: 'routes.1.tokens.jwt.issuer', message: expect.stringContaining('must use https') as unknown },
      { path: 'routes.1.name', message: 'duplicate name "calc" (also routes.0)' },
      { path: 'routes.1.path', message: 'duplicate path "/calc/mcp" (also routes.0)' },
      { path: 'routes.2.default', message: 'only one route may be default (also routes.1)' },
    ]);
  });

  it('reports schema and cross-key problems in one pass: a route failing the schema leaves the others checked, their indexes as in the file', () => {
    const route = minimalConfig().routes as Record<string, unknown>[];
    const broken = { ...route[0], name: 'broken', path: '/broken', unknown_key: 1 };
    const duplicate = { ...route[0], upstream: { url: 'http://127.0.0.1:3000/mcp', auth: { type: 'bearer', token: 'literal-token-in-the-file' } } };
    const result = parseObject(configWith({ routes: [broken, route[0], duplicate] }));
    expect(problems(result)).toEqual([
      { path: 'routes.0.unknown_key', message: 'unknown key' },
      { path: 'routes.2.name', message: 'duplicate name "calc" (also routes.1)' },
      { path: 'routes.2.path', message: 'duplicate path "/calc/mcp" (also routes.1)' },
    ]);
    // The duplicate also shares routes.1's audience: that warning comes along in the same pass.
    expect(result.ok === false && result.warnings).toEqual([
      expect.stringContaining('routes.2.upstream.auth.token'),
      expect.stringContaining('routes.1.tokens.jwt.audience'),
    ]);
  });

  it('a schema problem outside routes leaves the cross-key checks for the next run (they need that section)', () => {
    const route = minimalConfig().routes as Record<string, unknown>[];
    const result = parseObject(configWith({ 'listen.port': -1, routes: [route[0], route[0]] }));
    expect(problems(result).map((problem) => problem.path)).toEqual(['listen.port']);
  });

  it('reports failed secret references alongside schema problems', () => {
    const result = parseObject(
      configWith({ 'cache.redis_url': '${env:REDIS_URL}', 'cache.key_secret': 'short', 'listen.port': -1 }),
      { env: {} },
    );
    expect(problems(result)).toEqual([
      { path: 'cache.redis_url', message: 'environment variable REDIS_URL is not set' },
      { path: 'listen.port', message: expect.any(String) as unknown },
      { path: 'cache.key_secret', message: 'must be at least 32 characters' },
    ]);
  });
});

describe('config/example.yaml', () => {
  const env = {
    REDIS_URL: 'rediss://:redis-password@redis.example.com:6380',
    CACHE_KEY_SECRET: 'k'.repeat(48),
    CALC_UPSTREAM_TOKEN: 'calc-upstream-token',
    NOTES_API_KEY: 'notes-api-key',
    INTROSPECTION_SECRET: 'introspection-secret',
  };

  it('loads when its environment is provided', async () => {
    const config = compiled(await loadConfigFile(EXAMPLE, { env }));
    expect(config.routes.map((route) => [route.name, route.isDefault])).toEqual([['calc', true], ['notes', false]]);
    expect(config.routes[0]?.tokens.jwt?.issuer).toBe('https://auth.example.com/realms/mcp');
    expect(config.routes[1]?.tokens.introspection?.clientSecret?.reveal()).toBe(env.INTROSPECTION_SECRET);
    expect(config.warnings).toEqual([]);
  });

  it('names every missing environment variable', async () => {
    const result = await loadConfigFile(EXAMPLE, { env: {} });
    expect(problems(result).map((problem) => problem.message)).toEqual(
      Object.keys(env).map((name) => `environment variable ${name} is not set`),
    );
  });
});
