import { describe, expect, it } from 'vitest';
import { WELL_KNOWN_PRM } from '../../../src/config/compile.js';
import { compiled, configWith, minimalConfig, parseObject, problems } from './fixtures.js';

const ROUTE = (minimalConfig().routes as Record<string, unknown>[])[0] ?? {};

function routes(...overrides: Record<string, unknown>[]): Record<string, unknown>[] {
  return overrides.map((override) => ({ ...ROUTE, ...override }));
}

describe('resource, metadataPath and metadataUrl (RFC 9728 §3.1)', () => {
  it.each<[string, Record<string, unknown>, string, string, string]>([
    ['default resource', {}, 'https://gw.example.com/calc/mcp', `${WELL_KNOWN_PRM}/calc/mcp`,
      `https://gw.example.com${WELL_KNOWN_PRM}/calc/mcp`],
    ['route at "/"', { 'routes.0.path': '/' }, 'https://gw.example.com/', WELL_KNOWN_PRM,
      `https://gw.example.com${WELL_KNOWN_PRM}`],
    ['public_url with a base path', { public_url: 'https://gw.example.com/base' }, 'https://gw.example.com/base/calc/mcp',
      `${WELL_KNOWN_PRM}/base/calc/mcp`, `https://gw.example.com${WELL_KNOWN_PRM}/base/calc/mcp`],
    ['loopback public_url with a port', { public_url: 'http://127.0.0.1:8080' }, 'http://127.0.0.1:8080/calc/mcp',
      `${WELL_KNOWN_PRM}/calc/mcp`, `http://127.0.0.1:8080${WELL_KNOWN_PRM}/calc/mcp`],
    ['resource on another origin: metadata stays on the gateway', { 'routes.0.resource': 'https://api.example.com/v1/mcp' },
      'https://api.example.com/v1/mcp', `${WELL_KNOWN_PRM}/v1/mcp`, `https://gw.example.com${WELL_KNOWN_PRM}/v1/mcp`],
    ['E6 resource with a terminating slash', { 'routes.0.resource': 'https://gw.example.com/upstream/' },
      'https://gw.example.com/upstream/', `${WELL_KNOWN_PRM}/upstream`, `https://gw.example.com${WELL_KNOWN_PRM}/upstream`],
    ['resource that is an origin', { 'routes.0.resource': 'https://api.example.com' }, 'https://api.example.com',
      WELL_KNOWN_PRM, `https://gw.example.com${WELL_KNOWN_PRM}`],
  ])('%s', (_title, edits, resource, metadataPath, metadataUrl) => {
    const route = compiled(parseObject(configWith(edits))).routes[0];
    expect(route).toMatchObject({ resource, metadataPath, metadataUrl });
    expect(route?.tokens.jwt?.audiences).toEqual([resource]);
  });

  it('takes an explicit audience over the resource', () => {
    const edits = { 'routes.0.tokens.jwt.audience': 'api://calc', 'routes.0.tokens.jwt.strict_audience': true };
    const config = compiled(parseObject(configWith(edits)));
    expect(config.routes[0]?.tokens.jwt).toMatchObject({ audiences: ['api://calc'], strictAudience: true });
    expect(config.routes[0]?.resource).toBe('https://gw.example.com/calc/mcp');
  });

  it('takes a list of audiences (an app id and a URN) over the resource', () => {
    const edits = { 'routes.0.tokens.jwt.audience': ['00000000-aaaa-4bbb-8ccc-000000000001', 'urn:example:calc'] };
    const config = compiled(parseObject(configWith(edits)));
    expect(config.routes[0]?.tokens.jwt?.audiences).toEqual(['00000000-aaaa-4bbb-8ccc-000000000001', 'urn:example:calc']);
  });
});

describe('route tables and the default route (shape B)', () => {
  const lookup = (config: ReturnType<typeof compiled>) => ({
    byPath: [...config.routesByPath].map(([path, route]) => [path, route.name]),
    byMetadataPath: [...config.routesByMetadataPath].map(([path, route]) => [path, route.name]),
    isDefault: config.routes.map((route) => route.isDefault),
  });

  it('serves the only route at the root metadata path', () => {
    expect(lookup(compiled(parseObject(minimalConfig())))).toEqual({
      byPath: [['/calc/mcp', 'calc']],
      byMetadataPath: [[`${WELL_KNOWN_PRM}/calc/mcp`, 'calc'], [WELL_KNOWN_PRM, 'calc']],
      isDefault: [true],
    });
  });

  it('has no root metadata path for several routes without a default', () => {
    const config = compiled(parseObject(configWith({ routes: routes({}, { name: 'notes', path: '/notes/mcp' }) })));
    expect(lookup(config)).toEqual({
      byPath: [['/calc/mcp', 'calc'], ['/notes/mcp', 'notes']],
      byMetadataPath: [[`${WELL_KNOWN_PRM}/calc/mcp`, 'calc'], [`${WELL_KNOWN_PRM}/notes/mcp`, 'notes']],
      isDefault: [false, false],
    });
  });

  it('serves the route marked default at the root metadata path', () => {
    const notes = { name: 'notes', path: '/notes/mcp', default: true };
    const config = compiled(parseObject(configWith({ routes: routes({}, notes) })));
    expect(lookup(config)).toEqual({
      byPath: [['/calc/mcp', 'calc'], ['/notes/mcp', 'notes']],
      byMetadataPath: [
        [`${WELL_KNOWN_PRM}/calc/mcp`, 'calc'],
        [`${WELL_KNOWN_PRM}/notes/mcp`, 'notes'],
        [WELL_KNOWN_PRM, 'notes'],
      ],
      isDefault: [false, true],
    });
  });

  it('accepts a single route whose own metadata path is the root', () => {
    const config = compiled(parseObject(configWith({ 'routes.0.path': '/', 'routes.0.default': true })));
    expect(lookup(config)).toEqual({
      byPath: [['/', 'calc']],
      byMetadataPath: [[WELL_KNOWN_PRM, 'calc']],
      isDefault: [true],
    });
  });
});

describe('immutability', () => {
  const config = compiled(parseObject(configWith({ 'routes.0.cors.allowed_origins': ['https://app.example.com'] })));
  const route = config.routes[0];

  it.each([
    ['config', config],
    ['routes', config.routes],
    ['route', route],
    ['upstream', route?.upstream],
    ['upstream auth', route?.upstream.auth],
    ['jwt settings', route?.tokens.jwt],
    ['algorithms', route?.tokens.jwt?.algorithms],
    ['authorization servers', route?.authorizationServers],
    ['policy', route?.policy],
    ['policy scopes', route?.policy.scopes],
    ['cors', route?.cors],
    ['cache', config.cache],
    ['listen', config.listen],
    ['warnings', config.warnings],
  ])('%s is frozen', (_title, value) => {
    expect(Object.isFrozen(value)).toBe(true);
  });

  it('maps and sets refuse mutation', () => {
    const message = 'the compiled configuration is immutable';
    const byPath = config.routesByPath as Map<string, unknown>;
    const origins = route?.cors.allowedOrigins as Set<string>;
    const tools = route?.policy.tools as Map<string, readonly string[]>;
    expect(() => byPath.set('/evil', {})).toThrow(message);
    expect(() => byPath.delete('/calc/mcp')).toThrow(message);
    expect(() => (config.routesByMetadataPath as Map<string, unknown>).clear()).toThrow(message);
    expect(() => origins.add('https://evil.example')).toThrow(message);
    expect(() => tools.set('add', [])).toThrow(message);
    expect(config.routesByPath.get('/calc/mcp')).toBe(route);
    expect([...(route?.cors.allowedOrigins ?? [])]).toEqual(['https://app.example.com']);
  });
});

describe('the order check-config prints findings in', () => {
  it('lists problems by check, each across all routes: https, route table, upstream, policy, listener ports, consent', () => {
    const userOAuth = { type: 'user_oauth', issuer: 'https://up.example.com', client_id: 'gateway' };
    const apiKey = { type: 'header', name: 'X-Api-Key', value: '${env:INTROSPECTION_SECRET}' };
    const config = configWith({
      public_url: 'http://gw.example.com',
      'admin.port': 8080,
      routes: routes(
        { policy: { resources: { 'notes://{id}': ['notes:read'] } } },
        { name: 'notes', path: '/notes/mcp', upstream: { url: 'http://127.0.0.1:3001/mcp', auth: apiKey, identity: { header: 'x-api-key' } } },
        { path: '/files/mcp', upstream: { url: 'http://127.0.0.1:3002/mcp', auth: userOAuth } },
      ),
    });
    expect(problems(parseObject(config)).map((problem) => problem.path)).toEqual([
      'public_url',
      'routes.2.name',
      'routes.1.upstream.identity.header',
      'routes.0.policy.resources.notes://{id}',
      'admin.port',
      'routes.2.upstream.auth.type',
    ]);
  });

  it('lists literal secrets first, then warnings spanning sections, then each route\'s unadvertised scopes', () => {
    const config = compiled(parseObject(configWith({
      allow_insecure_http: true,
      'routes.0.upstream.auth': { type: 'bearer', token: 'literal-token' },
      'routes.0.policy.scopes': ['calc:read'],
    })));
    expect(config.warnings.map((warning) => warning.split(':', 1)[0])).toEqual([
      'routes.0.upstream.auth.token',
      'allow_insecure_http',
      'routes.0.policy.scopes',
    ]);
  });
});
