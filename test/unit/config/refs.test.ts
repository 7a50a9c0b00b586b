import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { INTROSPECTION, compiled, configWith, parseObject, problems } from './fixtures.js';

const SECRETS = {
  REDIS_URL: 'rediss://:redis-canary-password@redis.example.com:6380',
  CACHE_KEY: 'cache-key-canary-0123456789abcdef0123456789',
  UPSTREAM_TOKEN: 'upstream-canary-token',
  CLIENT_SECRET: 'client-canary-secret',
};

const FILES: Record<string, string> = {
  '/run/secrets/upstream-token': `${SECRETS.UPSTREAM_TOKEN}\n`,
  '/run/secrets/host': 'as.example.com',
};

function readFile(path: string): string {
  const content = FILES[path];
  if (content === undefined) throw Object.assign(new Error(`ENOENT: no such file, open '${path}'`), { code: 'ENOENT' });
  return content;
}

const env = {
  REDIS_URL: SECRETS.REDIS_URL,
  CACHE_KEY: SECRETS.CACHE_KEY,
  CLIENT_SECRET: SECRETS.CLIENT_SECRET,
  REALM: 'mcp',
};

const withRefs = () =>
  configWith({
    'cache.redis_url': '${env:REDIS_URL}',
    'cache.key_secret': '${env:CACHE_KEY}',
    'routes.0.upstream.auth': { type: 'bearer', token: '${file:/run/secrets/upstream-token}' },
    'routes.0.tokens.introspection': { ...INTROSPECTION, client_secret: '${env:CLIENT_SECRET}' },
    'routes.0.authorization_servers': ['https://${file:/run/secrets/host}/realms/${env:REALM}'],
  });

describe('secret references', () => {
  it('resolves ${env:…} and ${file:…}, whole or embedded, in any string value', () => {
    const config = compiled(parseObject(withRefs(), { env, readFile }));
    const route = config.routes[0];
    expect(config.cache.redisUrl?.reveal()).toBe(SECRETS.REDIS_URL);
    expect(config.cache.keySecret?.reveal()).toBe(SECRETS.CACHE_KEY);
    expect(route?.upstream.auth.type === 'bearer' && route.upstream.auth.token.reveal()).toBe(SECRETS.UPSTREAM_TOKEN);
    expect(route?.tokens.introspection?.clientSecret?.reveal()).toBe(SECRETS.CLIENT_SECRET);
    expect(route?.authorizationServers).toEqual(['https://as.example.com/realms/mcp']);
    expect(config.warnings).toEqual([]);
  });

  it('does not expand references inside resolved values', () => {
    const config = compiled(parseObject(
      configWith({ 'routes.0.upstream.auth': { type: 'bearer', token: '${env:TOKEN}' } }),
      { env: { TOKEN: '${env:OTHER}', OTHER: 'x' } },
    ));
    const auth = config.routes[0]?.upstream.auth;
    expect(auth?.type === 'bearer' && auth.token.reveal()).toBe('${env:OTHER}');
  });

  it.each<[string, string, string]>([
    ['an unset variable', '${env:ABSENT}', 'environment variable ABSENT is not set'],
    ['a missing file', '${file:/run/secrets/absent}', 'cannot read file /run/secrets/absent (ENOENT)'],
    ['a relative file', '${file:secrets/token}', 'file reference secrets/token must be an absolute path'],
    ['an unknown kind', '${vault:kv/token}', 'unsupported reference; write ${env:NAME} or ${file:/absolute/path}'],
    ['an invalid variable name', '${env:NOT-A-NAME}', 'unsupported reference; write ${env:NAME} or ${file:/absolute/path}'],
  ])('names the path of %s', (_title, reference, message) => {
    const config = configWith({ 'routes.0.upstream.auth': { type: 'bearer', token: `prefix-${reference}` } });
    expect(problems(parseObject(config, { env, readFile }))).toEqual([{ path: 'routes.0.upstream.auth.token', message }]);
  });

  it('reports every failed reference, and no schema complaint about the value left empty', () => {
    const config = configWith({
      'cache.redis_url': '${env:REDIS_URL}',
      'cache.key_secret': '${env:CACHE_KEY}',
      'routes.0.tokens.jwt.issuer': '${env:ISSUER}',
    });
    expect(problems(parseObject(config, { env: {}, readFile }))).toEqual([
      { path: 'routes.0.tokens.jwt.issuer', message: 'environment variable ISSUER is not set' },
      { path: 'cache.redis_url', message: 'environment variable REDIS_URL is not set' },
      { path: 'cache.key_secret', message: 'environment variable CACHE_KEY is not set' },
    ]);
  });

  it('warns about each secret written as a literal', () => {
    const config = compiled(parseObject(configWith({
      'cache.redis_url': 'redis://redis:6379',
      'cache.key_secret': 'k'.repeat(32),
      'routes.0.upstream.auth': { type: 'header', name: 'X-Api-Key', value: 'literal' },
      'routes.0.tokens.introspection': { ...INTROSPECTION, client_secret: 'literal' },
    })));
    expect(config.warnings).toEqual([
      'cache.redis_url: literal secret in config; prefer ${env:…} or ${file:…}',
      'cache.key_secret: literal secret in config; prefer ${env:…} or ${file:…}',
      'routes.0.upstream.auth.value: literal secret in config; prefer ${env:…} or ${file:…}',
      'routes.0.tokens.introspection.client_secret: literal secret in config; prefer ${env:…} or ${file:…}',
    ]);
  });

  it('wraps every secret field so that no serialisation prints it', () => {
    const config = compiled(parseObject(withRefs(), { env, readFile }));
    const printed = [JSON.stringify(config), inspect(config, { depth: null }), String(config.cache.redisUrl)].join('\n');
    for (const secret of Object.values(SECRETS)) expect(printed).not.toContain(secret);
    expect(printed).not.toContain('redis-canary-password');
    expect(printed).toContain('[secret]');
  });

  it('never prints a secret in a problem about it', () => {
    const config = configWith({
      'cache.redis_url': '${env:REDIS_URL}',
      'cache.key_secret': '${env:SHORT}',
      'routes.0.upstream.auth': { type: 'bearer', token: '${env:BAD_TOKEN}' },
    });
    const badValues = { REDIS_URL: 'http://:canary-pw@redis', SHORT: 'canary-short', BAD_TOKEN: 'canary token' };
    const found = problems(parseObject(config, { env: badValues }));
    expect(found.map((problem) => problem.path)).toEqual([
      'cache.redis_url',
      'cache.key_secret',
      'routes.0.upstream.auth.token',
    ]);
    expect(JSON.stringify(found)).not.toContain('canary');
  });
});
