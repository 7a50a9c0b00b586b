import { describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair } from 'jose';
import { restartOnlyChanges } from '../../../src/reload/restart-only.js';
import { compiled, configWith, parseObject } from '../config/fixtures.js';

const started = compiled(parseObject(configWith({ 'limits.max_body_bytes': 4096 })));

describe('settings a reload cannot change', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['routes only', { 'routes.0.path': '/other/mcp', 'limits.max_body_bytes': 4096 }, []],
    ['a lower body limit (applied per request)', { 'limits.max_body_bytes': 1024 }, []],
    ['a higher body limit', { 'limits.max_body_bytes': 8192 }, ['limits.max_body_bytes']],
    ['listen and admin sockets', { 'listen.port': 9999, 'admin.host': '0.0.0.0', 'limits.max_body_bytes': 4096 }, ['listen.port', 'admin.host']],
    ['the cache backend', { 'cache.redis_url': 'redis://127.0.0.1:6379', 'cache.key_secret': 'k'.repeat(32), 'limits.max_body_bytes': 4096 }, ['cache.redis_url', 'cache.key_secret']],
    [
      'a sentinel topology',
      { 'cache.redis_sentinel': { name: 'main', sentinels: ['127.0.0.1:26379'] }, 'cache.key_secret': 'k'.repeat(32), 'limits.max_body_bytes': 4096 },
      ['cache.redis_sentinel', 'cache.key_secret'],
    ],
    [
      'a cluster topology',
      { 'cache.redis_cluster': { nodes: ['127.0.0.1:7000'] }, 'cache.key_secret': 'k'.repeat(32), 'limits.max_body_bytes': 4096 },
      ['cache.redis_cluster', 'cache.key_secret'],
    ],
    ['the Redis command timeout and in-process bounds', { 'cache.command_timeout': '300ms', 'cache.memory.sessions': 500, 'limits.max_body_bytes': 4096 }, ['cache.command_timeout', 'cache.memory']],
    [
      'telemetry.traces: the tracer provider is built at start',
      { telemetry: { traces: { otlp_endpoint: 'http://127.0.0.1:4318' } }, 'limits.max_body_bytes': 4096 },
      ['telemetry.traces'],
    ],
    [
      'the decision listener: its socket needs a restart, its proxy and secret do not',
      { decision: { port: 8282, proxy: 'envoy', unauthenticated: true }, 'limits.max_body_bytes': 4096 },
      ['decision'],
    ],
  ])('%s', (_title, edits, paths) => {
    expect(restartOnlyChanges(started, compiled(parseObject(configWith(edits))))).toEqual(paths);
  });

  it('a changed sentinel password is a restart-only change', () => {
    const sentinel = (password: string) =>
      compiled(parseObject(configWith({
        'cache.redis_sentinel': { name: 'main', sentinels: ['127.0.0.1:26379'], password },
        'cache.key_secret': 'k'.repeat(32),
      })));
    expect(restartOnlyChanges(sentinel('one'), sentinel('two'))).toEqual(['cache.redis_sentinel']);
    expect(restartOnlyChanges(sentinel('one'), sentinel('one'))).toEqual([]);
  });
});

describe('decision listener settings on reload', () => {
  const listener = (decision: Record<string, unknown>) => compiled(parseObject(configWith({ decision })));

  it('a new proxy, secret or path prefix applies at once; a new host or port needs a restart', () => {
    const before = listener({ proxy: 'nginx', secret: 's'.repeat(32) });
    expect(restartOnlyChanges(before, listener({ proxy: 'envoy', secret: 't'.repeat(32), path_prefix: '/authz' }))).toEqual([]);
    expect(restartOnlyChanges(before, listener({ proxy: 'nginx', secret: 's'.repeat(32), port: 9191, host: '0.0.0.0' }))).toEqual(['decision.host', 'decision.port']);
  });
});

describe('the authorization server on reload', () => {
  const withServer = async (issuer?: string) => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const keys = JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'k', alg: 'ES256' }] });
    const section = { signing_keys: keys, sign_in: { issuer: 'https://login.example.com', client_id: 'gw' }, ...(issuer ? { issuer } : {}) };
    return compiled(parseObject(configWith({ authorization_server: section })));
  };

  it('turning it on or off, or moving its issuer, needs a restart (its addresses are routed at start); new keys do not', async () => {
    const without = compiled(parseObject(configWith({})));
    const served = await withServer();
    expect(restartOnlyChanges(without, served)).toEqual(['authorization_server']);
    expect(restartOnlyChanges(served, without)).toEqual(['authorization_server']);
    expect(restartOnlyChanges(served, await withServer())).toEqual([]);
    const moved = await withServer(`${served.publicUrl.origin}/as`);
    expect(restartOnlyChanges(served, moved)).toEqual(['authorization_server.issuer']);
  });
});
