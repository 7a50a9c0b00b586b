import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';

/**
 * The decision listener as Envoy's ext_authz HTTP service and Traefik's forwardAuth see it (no Envoy or Traefik
 * binary here): their documented request shapes in, their documented verdict contract out. Envoy: any 200 allows
 * and copies `allowed_upstream_headers` upstream (and removes `x-envoy-auth-headers-to-remove`); anything else is
 * returned to the client as is. Traefik: 2xx allows and copies `authResponseHeaders`; anything else goes back.
 * Traefik copies the client's own headers into its question; Envoy passes those its `allowed_headers` name.
 */

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;
const OPEN = `${PUBLIC}/open/mcp`;
const MODERN = `${PUBLIC}/modern/mcp`;
const PREFIX = '/ext-authz';
const SECRET = 'a-shared-secret-of-at-least-32-characters';
const PROXY_SECRET = { 'x-mcp-decision-secret': SECRET };

interface Verdict {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A gateway whose decision listener answers `proxy`; `ask` sends a question as that proxy would (with the secret). */
function decisionStack(decisionKeys: string, topLevel = '') {
  let decisionUrl = '';
  const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
decision: { port: 0, ${decisionKeys} }
allowed_hosts: [gw.example.test]
${topLevel}
routes:
${jwtRoute('calc', target, 'auth: { type: bearer, token: upstream-secret }')}
    sessions: { bind: false }
    policy: { scopes: [mcp], tools: { multiply: [calc:write] } }
${jwtRoute('open', target)}
    sessions: { bind: false }
${jwtRoute('bound', target)}
    sessions: { bind: true }
${jwtRoute('modern', target, 'auth: { type: bearer, token: upstream-secret }, validates_mirrored_headers: true')}
    sessions: { bind: false }
    policy: { scopes: [mcp], tools: { multiply: [calc:write] } }
`);
  beforeAll(async () => {
    const decision = stack.gw.gateway.decision;
    if (!decision) throw new Error('decision listener not built');
    await decision.listen({ host: '127.0.0.1', port: 0 });
    decisionUrl = `http://127.0.0.1:${(decision.server.address() as AddressInfo).port}`;
  });
  async function ask(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Verdict> {
    const response = await request(`${decisionUrl}${path}`, {
      method: method as 'POST',
      headers: { host: 'gw.example.test', ...headers },
      ...(body === undefined ? {} : { body }),
    });
    return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
  }
  const bearer = async (aud: string, scope: string, sub = 'alice') => `Bearer ${await stack.issuer.mint({ aud, scope, sub })}`;
  return { stack, ask, bearer };
}

const call = (name: string, id = 4) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
const errorCode = (verdict: Verdict) => (JSON.parse(verdict.body) as { error: { code: number } }).error.code;

describe('Envoy ext_authz (HTTP service): the original request under path_prefix', () => {
  const { stack, ask, bearer } = decisionStack(`proxy: envoy, path_prefix: ${PREFIX}, secret: ${SECRET}`);
  const asEnvoy = (method: string, path: string, headers: Record<string, string>, body?: string) => ask(method, `${PREFIX}${path}`, { ...PROXY_SECRET, ...headers }, body);

  it('allowed → 200 with the upstream credential, never the client token; the client token is removed upstream', async () => {
    const authorization = await bearer(CALC, 'mcp');
    const verdict = await asEnvoy('POST', '/calc/mcp', { authorization, 'content-type': 'application/json' }, call('add'));
    expect(verdict.status).toBe(200);
    expect(verdict.headers.authorization).toBe('Bearer upstream-secret');
    expect(verdict.headers['x-envoy-auth-headers-to-remove']).toBe('proxy-authorization, cookie, dpop');
    expect(JSON.stringify(verdict)).not.toContain(authorization.slice(7));
    expect(stack.upstream.requests).toHaveLength(0);
  });

  it('a route without upstream credential: 200 and the client Authorization is removed', async () => {
    const verdict = await asEnvoy('GET', '/open/mcp', { authorization: await bearer(OPEN, 'mcp') });
    expect(verdict.status).toBe(200);
    expect(verdict.headers.authorization).toBeUndefined();
    expect(verdict.headers['x-envoy-auth-headers-to-remove']).toBe('authorization, proxy-authorization, cookie, dpop');
  });

  it('refused → exactly the proxy-mode status, challenge and body (401 without a token)', async () => {
    const verdict = await asEnvoy('POST', '/calc/mcp', { 'content-type': 'application/json' }, call('add'));
    const direct = await request(`${stack.gw.url}/calc/mcp`, { method: 'POST', headers: { host: 'gw.example.test', 'content-type': 'application/json' }, body: call('add') });
    expect([verdict.status, direct.statusCode]).toEqual([401, 401]);
    expect(verdict.headers['www-authenticate']).toBe(direct.headers['www-authenticate']);
    expect(verdict.body).toBe(await direct.body.text());
  });

  it('with_request_body: the body decides the operation scopes (403 naming every scope, with the request id)', async () => {
    const verdict = await asEnvoy('POST', '/calc/mcp', { authorization: await bearer(CALC, 'mcp'), 'content-type': 'application/json' }, call('multiply', 11));
    expect(verdict.status).toBe(403);
    expect(verdict.headers['www-authenticate']).toContain('scope="mcp calc:write"');
  });

  it('without the body, a 2025-11-25 request on a route that decides per tool → 400, never allowed', async () => {
    const verdict = await asEnvoy('POST', '/calc/mcp', { authorization: await bearer(CALC, 'mcp'), 'content-type': 'application/json' });
    expect(verdict.status).toBe(400);
    expect(JSON.parse(verdict.body)).toMatchObject({ error: { code: -32600, message: 'The gateway needs the request body to authorize this request' } });
  });

  it('a partial body (allow_partial_message) decides nothing: treated as no body', async () => {
    const verdict = await asEnvoy(
      'POST',
      '/calc/mcp',
      { authorization: await bearer(CALC, 'mcp'), 'content-type': 'application/json', 'x-envoy-auth-partial-body': 'true' },
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ad',
    );
    expect(verdict.status).toBe(400);
  });

  it('a path outside path_prefix is a misconfigured proxy: 500, never allowed', async () => {
    expect((await ask('GET', '/calc/mcp', { ...PROXY_SECRET, authorization: await bearer(CALC, 'mcp') })).status).toBe(500);
  });

  it('a client-written nginx description (X-Original-URI/-Method: GET) in an Envoy question → 400, never decided as a GET', async () => {
    const verdict = await asEnvoy(
      'POST',
      '/calc/mcp',
      { authorization: await bearer(CALC, 'mcp'), 'content-type': 'application/json', 'x-original-uri': '/calc/mcp', 'x-original-method': 'GET' },
      call('multiply'),
    );
    expect(verdict.status).toBe(400);
    expect(verdict.headers.authorization).toBeUndefined();
    expect(stack.gw.logs.some((line) => line.includes('another proxy\'s description'))).toBe(true);
  });
});

describe('Traefik forwardAuth: the original request described in X-Forwarded-* headers', () => {
  const { stack, ask, bearer } = decisionStack(`proxy: traefik, secret: ${SECRET}`, 'trusted_proxies: [127.0.0.1]');
  const asTraefik = (method: string, uri: string, headers: Record<string, string>) =>
    ask('GET', '/', { ...PROXY_SECRET, 'x-forwarded-method': method, 'x-forwarded-uri': uri, 'x-forwarded-host': 'gw.example.test', 'x-forwarded-for': '198.51.100.7', ...headers });

  it('X-Forwarded-Method/-Uri/-Host describe it; allowed → 2xx with the credential', async () => {
    const verdict = await asTraefik('GET', '/calc/mcp', { authorization: await bearer(CALC, 'mcp') });
    expect(verdict.status).toBe(200);
    expect(verdict.headers.authorization).toBe('Bearer upstream-secret');
    expect(verdict.headers['x-envoy-auth-headers-to-remove']).toBeUndefined();
  });

  it('an unknown original path → the proxy-mode 404', async () => {
    expect((await asTraefik('GET', '/other/mcp', {})).status).toBe(404);
  });

  it('without the original method: 500, never decided as the asking method', async () => {
    expect((await ask('GET', '/', { ...PROXY_SECRET, authorization: await bearer(CALC, 'mcp'), 'x-forwarded-uri': '/calc/mcp' })).status).toBe(500);
  });

  it('a client adding X-Original-URI/-Method: GET to its POST tools/call multiply (Traefik copies it) → 400, not 200 with the credential', async () => {
    const logged = () => stack.gw.logs.filter((line) => line.includes('another proxy\'s description')).length;
    const before = logged();
    const verdict = await asTraefik('POST', '/calc/mcp', {
      authorization: await bearer(CALC, 'mcp'),
      'content-type': 'application/json',
      'x-original-uri': '/calc/mcp',
      'x-original-method': 'GET',
    });
    expect(verdict.status).toBe(400);
    expect(verdict.headers.authorization).toBeUndefined();
    expect(logged()).toBe(before + 1);
  });

  it('a Host outside allowed_hosts in X-Forwarded-Host (Traefik sets it for the client) → 403', async () => {
    const verdict = await asTraefik('GET', '/calc/mcp', { authorization: await bearer(CALC, 'mcp'), 'x-forwarded-host': 'rebound.attacker.test' });
    expect(verdict.status).toBe(403);
  });
});

describe('nginx auth_request: X-Original-URI / X-Original-Method; the Host nginx sets', () => {
  const { ask, bearer } = decisionStack(`proxy: nginx, secret: ${SECRET}`);
  const asNginx = (method: string, headers: Record<string, string>, uri = '/calc/mcp') =>
    ask('GET', '/_mcp_decision', { ...PROXY_SECRET, 'x-original-uri': uri, 'x-original-method': method, ...headers });

  it('a refusal carries its body in X-Mcp-Decision-Body (nginx never shows a refused subrequest body)', async () => {
    const verdict = await asNginx('POST', {});
    expect(verdict.status).toBe(401);
    expect(verdict.headers['x-mcp-decision-body']).toBe(verdict.body);
  });

  it('without X-Original-Method: 500, never decided as the asking method', async () => {
    expect((await ask('GET', '/', { ...PROXY_SECRET, authorization: await bearer(CALC, 'mcp'), 'x-original-uri': '/calc/mcp' })).status).toBe(500);
  });

  it('a client-sent X-Forwarded-Host naming an allowed host does not void allowed_hosts (nginx is not a trusted proxy here)', async () => {
    const verdict = await asNginx('GET', { host: 'rebound.attacker.test', 'x-forwarded-host': 'gw.example.test', authorization: await bearer(CALC, 'mcp') });
    expect(verdict.status).toBe(403);
    expect(JSON.parse(verdict.body)).toMatchObject({ error: 'host_forbidden' });
  });

  it('a client-written Traefik description (X-Forwarded-Method: GET) → 400, logged', async () => {
    const verdict = await asNginx('POST', { authorization: await bearer(CALC, 'mcp'), 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/calc/mcp' });
    expect(verdict.status).toBe(400);
    expect(verdict.headers['x-mcp-decision-body']).toBe(verdict.body);
  });

  describe('no body: a per-tool policy is not decided from Mcp-Name unless the upstream checks it', () => {
    const modern = (name: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name });

    it('Mcp-Name: add with the route scope only → 400 (the body could call multiply), never 200 with the credential', async () => {
      const verdict = await asNginx('POST', { authorization: await bearer(CALC, 'mcp'), ...modern('add') });
      expect([verdict.status, errorCode(verdict)]).toEqual([400, -32600]);
      expect(verdict.headers.authorization).toBeUndefined();
    });

    it('a 2025-11-25 request with the route scope only → 400', async () => {
      expect((await asNginx('POST', { authorization: await bearer(CALC, 'mcp') })).status).toBe(400);
    });

    it('a caller holding every scope the route names passes, whatever the body asks', async () => {
      const verdict = await asNginx('POST', { authorization: await bearer(CALC, 'mcp calc:write') });
      expect(verdict.status).toBe(200);
      expect(verdict.headers.authorization).toBe('Bearer upstream-secret');
    });

    it('GET and DELETE need only the route scopes (no operation to decide)', async () => {
      expect((await asNginx('GET', { authorization: await bearer(CALC, 'mcp') })).status).toBe(200);
    });

    it('upstream.validates_mirrored_headers: a 2026-07-28 request is decided from Mcp-Method / Mcp-Name', async () => {
      const denied = await asNginx('POST', { authorization: await bearer(MODERN, 'mcp'), ...modern('multiply') }, '/modern/mcp');
      expect(denied.status).toBe(403);
      expect(denied.headers['www-authenticate']).toContain('scope="mcp calc:write"');
      const allowed = await asNginx('POST', { authorization: await bearer(MODERN, 'mcp'), ...modern('add') }, '/modern/mcp');
      expect(allowed.status).toBe(200);
      const unnamed = await asNginx('POST', { authorization: await bearer(MODERN, 'mcp'), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' }, '/modern/mcp');
      expect([unnamed.status, errorCode(unnamed)]).toEqual([400, -32020]);
      const older = await asNginx('POST', { authorization: await bearer(MODERN, 'mcp') }, '/modern/mcp');
      expect(older.status).toBe(400);
    });
  });

  describe('sessions (the listener never sees the initialize answer)', () => {
    const BOUND = `${PUBLIC}/bound/mcp`;

    it('G1 an unbound session id is claimed by the first caller presenting it and refused (404) to anyone else', async () => {
      const session = { 'mcp-session-id': 'session-claimed-by-alice' };
      expect((await asNginx('GET', { authorization: await bearer(BOUND, 'mcp', 'alice'), ...session }, '/bound/mcp')).status).toBe(200);
      const bob = await asNginx('GET', { authorization: await bearer(BOUND, 'mcp', 'bob'), ...session }, '/bound/mcp');
      expect(bob.status).toBe(404);
      expect(JSON.parse(bob.body)).toMatchObject({ error: { message: 'Session not found' } });
      expect((await asNginx('GET', { authorization: await bearer(BOUND, 'mcp', 'alice'), ...session }, '/bound/mcp')).status).toBe(200);
    });
  });
});

describe('the listener answers only its proxy (decision.secret)', () => {
  const { stack, ask, bearer } = decisionStack(`proxy: nginx, secret: ${SECRET}`);
  const question = async (secret: Record<string, string>) =>
    ask('GET', '/_mcp_decision', { ...secret, 'x-original-uri': '/calc/mcp', 'x-original-method': 'GET', authorization: await bearer(CALC, 'mcp') });

  it.each<[string, Record<string, string>]>([
    ['without the secret', {}],
    ['with a wrong secret', { 'x-mcp-decision-secret': 'a-wrong-secret-of-at-least-32-characters!' }],
    ['with a prefix of the secret', { 'x-mcp-decision-secret': SECRET.slice(0, -1) }],
    ['with the secret and more', { 'x-mcp-decision-secret': `${SECRET}x` }],
    ['with an empty secret', { 'x-mcp-decision-secret': '' }],
  ])('a caller %s holding a valid client token gets 403, never the upstream credential', async (_name, secret) => {
    const verdict = await question(secret);
    expect(verdict.status).toBe(403);
    expect(verdict.headers.authorization).toBeUndefined();
    expect(verdict.body).not.toContain('upstream-secret');
    expect(JSON.stringify(stack.gw.logs)).not.toContain(SECRET);
  });

  it('the proxy presenting the secret is answered', async () => {
    const verdict = await question(PROXY_SECRET);
    expect(verdict.status).toBe(200);
    expect(verdict.headers.authorization).toBe('Bearer upstream-secret');
  });
});

describe('decision.unauthenticated: true answers any caller (an explicit choice)', () => {
  const { ask, bearer } = decisionStack('proxy: nginx, unauthenticated: true');

  it('a question without a secret is decided', async () => {
    const verdict = await ask('GET', '/_mcp_decision', { 'x-original-uri': '/calc/mcp', 'x-original-method': 'GET', authorization: await bearer(CALC, 'mcp') });
    expect(verdict.status).toBe(200);
  });
});
