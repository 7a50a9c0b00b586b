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

describe('decision listener settings', () => {
  const SECRET = 's'.repeat(32);

  it('compiles the proxy, the secret (never printed) and the path prefix', () => {
    const config = compiled(parseObject(configWith({ decision: { proxy: 'envoy', secret: SECRET, path_prefix: '/ext-authz' } })));
    expect(config.decision).toMatchObject({ host: '127.0.0.1', port: 8181, proxy: 'envoy', pathPrefix: '/ext-authz' });
    expect(config.decision?.secret?.reveal()).toBe(SECRET);
    expect(JSON.stringify(config.decision)).not.toContain(SECRET);
  });

  it('unauthenticated: true is an explicit choice without a secret', () => {
    expect(compiled(parseObject(configWith({ decision: { proxy: 'nginx', unauthenticated: true } }))).decision?.secret).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['no proxy named', { decision: { secret: SECRET } }, 'decision.proxy', 'must be one of nginx, traefik, envoy'],
    ['an unknown proxy', { decision: { proxy: 'haproxy', secret: SECRET } }, 'decision.proxy', 'must be one of nginx, traefik, envoy'],
    ['neither a secret nor unauthenticated', { decision: { proxy: 'nginx' } }, 'decision.secret', 'is required'],
    ['a short secret', { decision: { proxy: 'nginx', secret: 'short' } }, 'decision.secret', 'at least 32 characters'],
    ['a secret and unauthenticated', { decision: { proxy: 'nginx', secret: SECRET, unauthenticated: true } }, 'decision.unauthenticated', 'contradicts secret'],
  ])('check-config names %s at its YAML path', (_title, edits, path, message) => {
    const found = problems(parseObject(configWith(edits)));
    expect(found.map((problem) => problem.path)).toEqual([path]);
    expect(found[0]?.message).toContain(message);
  });
});

describe('listener ports', () => {
  const decision = (port: number) => ({ proxy: 'nginx', unauthenticated: true, port });

  it.each<[string, Record<string, unknown>, string]>([
    ['the decision listener on the main port', { decision: decision(8080) }, 'must differ from listen.port (8080)'],
    ['the decision listener on the admin port', { decision: decision(9090) }, 'must differ from admin.port (9090)'],
  ])('rejects %s: one socket cannot answer both', (_title, edits, message) => {
    expect(problems(parseObject(configWith(edits)))).toEqual([{ path: 'decision.port', message }]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['the admin port while the admin listener is off', { decision: decision(9090), 'admin.enabled': false }],
    ['port 0 on every listener', { 'listen.port': 0, 'admin.port': 0, decision: decision(0) }],
  ])('accepts the decision listener on %s', (_title, edits) => {
    expect(parseObject(configWith(edits)).ok).toBe(true);
  });
});

describe('trusted_proxies', () => {
  it('compiles addresses and CIDR blocks of both families; default: nobody', () => {
    expect(compiled(parseObject(configWith({}))).trustedProxies.none).toBe(true);
    const trusted = compiled(parseObject(configWith({ trusted_proxies: ['10.0.0.0/8', 'fd00::/8', '192.0.2.7'] }))).trustedProxies;
    expect(['10.9.9.9', 'fd00::1', '192.0.2.7', '192.0.2.8'].map((address) => trusted.trusts(address))).toEqual([true, true, true, false]);
  });

  it('names a bad entry at its YAML path', () => {
    const found = problems(parseObject(configWith({ trusted_proxies: ['10.0.0.0/8', 'ingress.local'] })));
    expect(found.map((problem) => problem.path)).toEqual(['trusted_proxies.1']);
  });
});

describe('check-config warnings for routes behind the decision listener', () => {
  const perTool = { 'routes.0.policy': { scopes: ['mcp'], tools: { multiply: ['calc:write'] } }, 'routes.0.scopes_supported': ['mcp', 'calc:write'] };

  it.each<[string, string]>([
    ['nginx', 'config/nginx/nginx-with-body.conf (njs)'],
    ['traefik', 'forwardBody: true'],
    ['envoy', 'with_request_body'],
  ])('%s: a per-tool route says how to send the body and what happens without it', (proxy, hint) => {
    const config = compiled(parseObject(configWith({ ...perTool, decision: { proxy, unauthenticated: true }, trusted_proxies: ['127.0.0.1'] })));
    const warning = config.warnings.find((line) => line.startsWith('routes.0.policy:'));
    expect(warning).toContain('pass only with every scope the policy names (others get 400)');
    expect(warning).toContain(hint);
  });

  it('traefik without trusted_proxies: the Host and client address Traefik forwards would be ignored', () => {
    const config = compiled(parseObject(configWith({ decision: { proxy: 'traefik', unauthenticated: true } })));
    expect(config.warnings.some((line) => line.startsWith('trusted_proxies: empty, but Traefik'))).toBe(true);
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

describe('decision.secret written in the file', () => {
  it('is warned about like every other literal secret; a reference is not', () => {
    const literal = compiled(parseObject(configWith({ decision: { proxy: 'nginx', secret: 's'.repeat(32) } })));
    expect(literal.warnings).toContain('decision.secret: literal secret in config; prefer ${env:…} or ${file:…}');
    const referenced = compiled(parseObject(configWith({ decision: { proxy: 'nginx', secret: '${env:DECISION_SECRET}' } }), { env: { DECISION_SECRET: 's'.repeat(32) } }));
    expect(referenced.warnings.some((warning) => warning.startsWith('decision.secret'))).toBe(false);
  });
});
