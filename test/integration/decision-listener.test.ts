import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';

/**
 * The decision listener as Envoy's ext_authz HTTP service and Traefik's forwardAuth see it (no Envoy or Traefik
 * binary here): their documented request shapes in, their documented verdict contract out. Envoy: any 200 allows
 * and copies `allowed_upstream_headers` upstream (and removes `x-envoy-auth-headers-to-remove`); anything else is
 * returned to the client as is. Traefik: 2xx allows and copies `authResponseHeaders`; anything else goes back.
 */

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;
const OPEN = `${PUBLIC}/open/mcp`;
const PREFIX = '/ext-authz';
let decisionUrl: string;

const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
decision: { port: 0, path_prefix: ${PREFIX} }
routes:
${jwtRoute('calc', target, 'auth: { type: bearer, token: upstream-secret }')}
    sessions: { bind: false }
    policy: { scopes: [mcp], tools: { multiply: [calc:write] } }
${jwtRoute('open', target)}
    sessions: { bind: false }
${jwtRoute('bound', target)}
    sessions: { bind: true }
`);

beforeAll(async () => {
  const decision = stack.gw.gateway.decision;
  if (!decision) throw new Error('decision listener not built');
  await decision.listen({ host: '127.0.0.1', port: 0 });
  decisionUrl = `http://127.0.0.1:${(decision.server.address() as AddressInfo).port}`;
});

interface Verdict {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

async function ask(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Verdict> {
  const response = await request(`${decisionUrl}${path}`, { method: method as 'POST', headers, ...(body === undefined ? {} : { body }) });
  return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
}

const call = (name: string, id = 4) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
const bearer = async (aud: string, scope: string) => `Bearer ${await stack.issuer.mint({ aud, scope })}`;

describe('Envoy ext_authz (HTTP service): the original request under path_prefix', () => {
  it('allowed → 200 with the upstream credential, never the client token; the client token is removed upstream', async () => {
    const authorization = await bearer(CALC, 'mcp');
    const verdict = await ask('POST', `${PREFIX}/calc/mcp`, { authorization, 'content-type': 'application/json' }, call('add'));
    expect(verdict.status).toBe(200);
    expect(verdict.headers.authorization).toBe('Bearer upstream-secret');
    expect(verdict.headers['x-envoy-auth-headers-to-remove']).toBe('proxy-authorization, cookie');
    expect(JSON.stringify(verdict)).not.toContain(authorization.slice(7));
    expect(stack.upstream.requests).toHaveLength(0);
  });

  it('a route without upstream credential: 200 and the client Authorization is removed', async () => {
    const verdict = await ask('GET', `${PREFIX}/open/mcp`, { authorization: await bearer(OPEN, 'mcp') });
    expect(verdict.status).toBe(200);
    expect(verdict.headers.authorization).toBeUndefined();
    expect(verdict.headers['x-envoy-auth-headers-to-remove']).toBe('authorization, proxy-authorization, cookie');
  });

  it('refused → exactly the proxy-mode status, challenge and body (401 without a token)', async () => {
    const verdict = await ask('POST', `${PREFIX}/calc/mcp`, { 'content-type': 'application/json' }, call('add'));
    const direct = await fetch(`${stack.gw.url}/calc/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: call('add') });
    expect(verdict.status).toBe(401);
    expect(verdict.headers['www-authenticate']).toBe(direct.headers.get('www-authenticate'));
    expect(verdict.body).toBe(await direct.text());
  });

  it('with_request_body: the body decides the operation scopes (403 naming every scope, with the request id)', async () => {
    const verdict = await ask('POST', `${PREFIX}/calc/mcp`, { authorization: await bearer(CALC, 'mcp'), 'content-type': 'application/json' }, call('multiply', 11));
    expect(verdict.status).toBe(403);
    expect(verdict.headers['www-authenticate']).toContain('scope="mcp calc:write"');
  });

  it('without the body, a 2025-11-25 request on a route that decides per tool → 400, never allowed', async () => {
    const verdict = await ask('POST', `${PREFIX}/calc/mcp`, { authorization: await bearer(CALC, 'mcp'), 'content-type': 'application/json' });
    expect(verdict.status).toBe(400);
    expect(JSON.parse(verdict.body)).toMatchObject({ error: { code: -32600, message: 'The gateway needs the request body to authorize this request' } });
  });

  it('a partial body (allow_partial_message) decides nothing: treated as no body', async () => {
    const verdict = await ask(
      'POST',
      `${PREFIX}/calc/mcp`,
      { authorization: await bearer(CALC, 'mcp'), 'content-type': 'application/json', 'x-envoy-auth-partial-body': 'true' },
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ad',
    );
    expect(verdict.status).toBe(400);
  });

  it('without the body, a 2026-07-28 request is decided from Mcp-Method / Mcp-Name', async () => {
    const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
    const denied = await ask('POST', `${PREFIX}/calc/mcp`, { authorization: await bearer(CALC, 'mcp'), ...headers, 'mcp-name': 'multiply' });
    expect(denied.status).toBe(403);
    expect(denied.headers['www-authenticate']).toContain('scope="mcp calc:write"');
    const allowed = await ask('POST', `${PREFIX}/calc/mcp`, { authorization: await bearer(CALC, 'mcp calc:write'), ...headers, 'mcp-name': 'multiply' });
    expect(allowed.status).toBe(200);
    const unnamed = await ask('POST', `${PREFIX}/calc/mcp`, { authorization: await bearer(CALC, 'mcp'), ...headers });
    expect([unnamed.status, (JSON.parse(unnamed.body) as { error: { code: number } }).error.code]).toEqual([400, -32020]);
  });

  it('a path outside path_prefix is a misconfigured proxy: 500, never allowed', async () => {
    expect((await ask('GET', '/calc/mcp', { authorization: await bearer(CALC, 'mcp') })).status).toBe(500);
  });
});

describe('Traefik forwardAuth and nginx auth_request: the original request described in headers', () => {
  it('Traefik: X-Forwarded-Method/-Uri/-Host describe it; allowed → 2xx with the credential', async () => {
    const verdict = await ask('GET', '/', {
      authorization: await bearer(CALC, 'mcp'),
      'x-forwarded-method': 'GET',
      'x-forwarded-uri': '/calc/mcp',
      'x-forwarded-host': 'gw.example.test',
    });
    expect(verdict.status).toBe(200);
    expect(verdict.headers.authorization).toBe('Bearer upstream-secret');
    expect(verdict.headers['x-envoy-auth-headers-to-remove']).toBeUndefined();
  });

  it('Traefik: an unknown original path → the proxy-mode 404', async () => {
    const verdict = await ask('GET', '/', { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/other/mcp' });
    expect(verdict.status).toBe(404);
  });

  it('nginx: a refusal carries its body in X-Mcp-Decision-Body (nginx never shows a refused subrequest body)', async () => {
    const verdict = await ask('GET', '/_mcp_decision', { 'x-original-uri': '/calc/mcp', 'x-original-method': 'POST' });
    expect(verdict.status).toBe(401);
    expect(verdict.headers['x-mcp-decision-body']).toBe(verdict.body);
  });

  it('nginx or Traefik without the original method: 500, never decided as the asking method', async () => {
    expect((await ask('GET', '/', { authorization: await bearer(CALC, 'mcp'), 'x-original-uri': '/calc/mcp' })).status).toBe(500);
    expect((await ask('GET', '/', { authorization: await bearer(CALC, 'mcp'), 'x-forwarded-uri': '/calc/mcp' })).status).toBe(500);
  });
});

describe('sessions through the decision listener (it never sees the initialize answer)', () => {
  const BOUND = `${PUBLIC}/bound/mcp`;
  const asUser = async (sub: string) => `Bearer ${await stack.issuer.mint({ aud: BOUND, scope: 'mcp', sub })}`;

  it('G1 an unbound session id is claimed by the first caller presenting it and refused (404) to anyone else', async () => {
    const session = { 'mcp-session-id': 'session-claimed-by-alice' };
    expect((await ask('GET', `${PREFIX}/bound/mcp`, { authorization: await asUser('alice'), ...session })).status).toBe(200);
    const bob = await ask('GET', `${PREFIX}/bound/mcp`, { authorization: await asUser('bob'), ...session });
    expect(bob.status).toBe(404);
    expect(JSON.parse(bob.body)).toMatchObject({ error: { message: 'Session not found' } });
    expect((await ask('GET', `${PREFIX}/bound/mcp`, { authorization: await asUser('alice'), ...session })).status).toBe(200);
  });
});
