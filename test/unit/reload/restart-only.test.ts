import { describe, expect, it } from 'vitest';
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
