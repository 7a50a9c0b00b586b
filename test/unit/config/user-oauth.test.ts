import { describe, expect, it } from 'vitest';
import { compiled, configWith, parseObject, problems } from './fixtures.js';

const env = { CONSENT_SECRET: 'consent-secret-canary', NOTES_SECRET: 'notes-secret-canary' };

const USER_OAUTH = {
  type: 'user_oauth',
  issuer: 'https://auth.notes-vendor.example',
  client_id: 'gateway-at-notes',
  client_secret: '${env:NOTES_SECRET}',
  scope: ['notes:read'],
  resource: 'https://mcp.notes-vendor.example/mcp',
};
const CONSENT = { login: { client_id: 'gateway-consent', client_secret: '${env:CONSENT_SECRET}' } };

function parse(edits: Record<string, unknown>) {
  return parseObject(configWith(edits), { env });
}

const messages = (edits: Record<string, unknown>) => problems(parse(edits)).map((problem) => `${problem.path}: ${problem.message}`);

describe('upstream.auth.type user_oauth and consent', () => {
  it('compiles with defaults: Authorization header, 30-day grants, 10-minute links, sign-in at the route\'s token issuer', () => {
    const config = compiled(parse({ 'routes.0.upstream.auth': USER_OAUTH, consent: CONSENT }));
    expect(config.routes[0]?.upstream.auth).toMatchObject({
      type: 'user_oauth',
      issuer: 'https://auth.notes-vendor.example',
      clientId: 'gateway-at-notes',
      clientAuth: { method: 'client_secret_basic' },
      scopes: ['notes:read'],
      resource: 'https://mcp.notes-vendor.example/mcp',
      header: 'authorization',
      grantTtl: 720 * 3_600_000,
      timeout: 5_000,
    });
    expect(config.consent).toMatchObject({
      login: { issuer: 'https://as.example.com', clientId: 'gateway-consent', clientAuth: { method: 'client_secret_basic' } },
      linkTtl: 600_000,
    });
    expect(JSON.stringify(config)).not.toContain('secret-canary');
  });

  it('without client_secret the gateway is a public client (PKCE only); header is lowercased', () => {
    const config = compiled(parse({ 'routes.0.upstream.auth': { ...USER_OAUTH, client_secret: undefined, header: 'X-Notes-Token' }, consent: { login: { client_id: 'c' } } }));
    expect(config.routes[0]?.upstream.auth).toMatchObject({ clientAuth: { method: 'none' }, header: 'x-notes-token' });
    expect(config.consent?.login.clientAuth).toEqual({ method: 'none' });
  });

  it('user_oauth needs the consent section', () => {
    expect(messages({ 'routes.0.upstream.auth': USER_OAUTH })).toEqual([
      'routes.0.upstream.auth.type: user_oauth needs the top-level consent section (consent.login)',
    ]);
  });

  it('a sign-in issuer other than the callers\' issuer is refused: no link could ever be accepted', () => {
    expect(messages({ 'routes.0.upstream.auth': USER_OAUTH, consent: { login: { ...CONSENT.login, issuer: 'https://other-as.example.com' } } })).toEqual([
      'routes.0.upstream.auth: callers of routes.0 come from https://as.example.com, but consent sign-in is at https://other-as.example.com: set one issuer for every user_oauth route',
    ]);
  });

  it('introspection-only routes without an issuer need consent.login.issuer', () => {
    const edits = {
      'routes.0.upstream.auth': USER_OAUTH,
      'routes.0.tokens': { introspection: { endpoint: 'https://as.example.com/introspect', client_id: 'g', client_secret: 'x' } },
      consent: CONSENT,
    };
    expect(messages(edits)).toEqual(["consent.login.issuer: is required: no user_oauth route names its callers' issuer (tokens.jwt.issuer)"]);
  });

  it.each([
    ['routes.0.upstream.auth.issuer', { 'routes.0.upstream.auth': { ...USER_OAUTH, issuer: 'http://auth.notes-vendor.example' }, consent: CONSENT }, 'routes.0.upstream.auth.issuer'],
    ['consent.login.issuer', { 'routes.0.upstream.auth': USER_OAUTH, consent: { login: { ...CONSENT.login, issuer: 'http://as.example.com' } } }, 'consent.login.issuer'],
  ])('http issuers are refused outside loopback (%s)', (_title, edits, path) => {
    expect(messages(edits)).toContain(`${path}: must use https (http is allowed only for loopback hosts, or with allow_insecure_http: true)`);
  });

  it('the identity header must differ from the user_oauth header', () => {
    const edits = {
      'routes.0.upstream.auth': { ...USER_OAUTH, header: 'X-Token' },
      'routes.0.upstream.identity': { header: 'x-token' },
      consent: CONSENT,
    };
    expect(messages(edits)).toEqual(['routes.0.upstream.identity.header: must differ from upstream.auth.header']);
  });

  it('a consent link lives at most 10 minutes; a grant at most a year', () => {
    expect(messages({ 'routes.0.upstream.auth': USER_OAUTH, consent: { ...CONSENT, link_ttl: '11m' } })).toEqual(['consent.link_ttl: must be at most 10m']);
    expect(messages({ 'routes.0.upstream.auth': { ...USER_OAUTH, grant_ttl: '9000h' }, consent: CONSENT })).toEqual([
      'routes.0.upstream.auth.grant_ttl: must be at most 8760h',
    ]);
  });

  it('K16 a route path under /consent/ is refused (the gateway\'s consent pages live there)', () => {
    expect(messages({ 'routes.0.path': '/consent/connect' })).toEqual([
      'routes.0.path: must not be under "/consent/" (the gateway\'s consent pages)',
    ]);
    expect(compiled(parse({ 'routes.0.path': '/consents/mcp' })).routes[0]?.path).toBe('/consents/mcp');
  });

  it('warns about literal secrets, grants kept in process memory, and consent without a user_oauth route', () => {
    const withGrants = compiled(
      parseObject(configWith({ 'routes.0.upstream.auth': { ...USER_OAUTH, client_secret: 'literal' }, consent: { login: { client_id: 'c', client_secret: 'literal' } } }), { env }),
    );
    expect(withGrants.warnings).toEqual(
      expect.arrayContaining([
        'routes.0.upstream.auth.client_secret: literal secret in config; prefer ${env:…} or ${file:…}',
        'consent.login.client_secret: literal secret in config; prefer ${env:…} or ${file:…}',
        expect.stringContaining('cache: no Redis; user_oauth grants are kept in this process only') as string,
      ]),
    );
    expect(compiled(parse({ consent: CONSENT })).warnings).toContain('consent: set, but no route uses upstream.auth.type user_oauth');
    expect(compiled(parse({ consent: CONSENT })).consent).toBeUndefined();
  });
});
