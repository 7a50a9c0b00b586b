import { describe, expect, it } from 'vitest';
import { compiled, configWith, parseObject, problems } from './fixtures.js';

describe('admin and shutdown settings', () => {
  it('defaults: admin on 127.0.0.1:9090, 20 s grace period', () => {
    const config = compiled(parseObject(configWith({})));
    expect(config.admin).toEqual({ enabled: true, host: '127.0.0.1', port: 9090 });
    expect(config.shutdown).toEqual({ gracePeriod: 20_000 });
  });

  it('compiles explicit values; durations in milliseconds', () => {
    const config = compiled(parseObject(configWith({ admin: { host: '0.0.0.0', port: 9100, enabled: false }, 'shutdown.grace_period': '45s' })));
    expect(config.admin).toEqual({ enabled: false, host: '0.0.0.0', port: 9100 });
    expect(config.shutdown.gracePeriod).toBe(45_000);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['J5 admin on the main port', { 'listen.port': 8080, 'admin.port': 8080 }, 'admin.port'],
    ['unknown admin key', { 'admin.path': '/metrics' }, 'admin.path'],
    ['admin port out of range', { 'admin.port': 70_000 }, 'admin.port'],
    ['grace period over 10 minutes', { 'shutdown.grace_period': '11m' }, 'shutdown.grace_period'],
    ['grace period not a duration', { 'shutdown.grace_period': 'soon' }, 'shutdown.grace_period'],
  ])('rejects %s', (_title, edits, path) => {
    expect(problems(parseObject(configWith(edits))).map((problem) => problem.path)).toEqual([path]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['port 0 on both (tests, "pick a free port")', { 'listen.port': 0, 'admin.port': 0 }],
    ['the same port with the admin listener disabled', { 'listen.port': 9090, 'admin.enabled': false }],
  ])('accepts %s', (_title, edits) => {
    expect(parseObject(configWith(edits)).ok).toBe(true);
  });
});

describe('log.audit_subject', () => {
  it('defaults to clear, without a warning', () => {
    const config = compiled(parseObject(configWith({})));
    expect(config.auditSubject).toBe('clear');
    expect(config.warnings).toEqual([]);
  });

  it('hashed with cache.key_secret compiles without a warning', () => {
    const config = compiled(parseObject(configWith({ 'log.audit_subject': 'hashed', 'cache.key_secret': '${env:KEY}' }), { env: { KEY: 'k'.repeat(32) } }));
    expect(config.auditSubject).toBe('hashed');
    expect(config.warnings).toEqual([]);
  });

  it('hashed without cache.key_secret warns that digests change per process', () => {
    const config = compiled(parseObject(configWith({ 'log.audit_subject': 'hashed' })));
    expect(config.warnings).toEqual([expect.stringMatching(/^log\.audit_subject: hashed without cache\.key_secret/)]);
  });

  it('rejects another mode, naming the path', () => {
    expect(problems(parseObject(configWith({ 'log.audit_subject': 'sha256' }))).map((problem) => problem.path)).toEqual(['log.audit_subject']);
  });
});
