import { describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';

/** K6: the upstream receives the client's headers by allowlist only, plus what the route forwards explicitly. */

const PUBLIC = 'https://gw.example.test';

const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('plain', target, 'auth: { type: bearer, token: upstream-secret }')}
    sessions: { bind: false }
${jwtRoute('toolsets', target, 'auth: { type: bearer, token: upstream-secret }, forward_headers: [X-MCP-Toolsets]')}
    sessions: { bind: false }
`);

/** Identity, routing and method-override headers of every vendor a client might forge. */
const FORGED = {
  'X-Authenticated-Userid': 'admin',
  'X-Authenticated-Scope': 'admin',
  'X-Consumer-Username': 'admin',
  'X-Original-URL': '/admin',
  'X-Rewrite-URL': '/admin',
  'X-Original-Method': 'DELETE',
  'X-HTTP-Method-Override': 'DELETE',
  'X-Method-Override': 'DELETE',
  'X-Envoy-Original-Path': '/admin',
  'X-Pomerium-Claim-Email': 'admin@example.com',
  'X-Tenant': 'other-tenant',
  'X-Forwarded-User': 'admin',
  Baggage: 'user.id=admin',
  Origin: 'https://evil.example',
  'X-Request-Id': 'forged-request-id',
};

async function post(path: string, headers: Record<string, string>): Promise<Response> {
  const token = await stack.issuer.mint({ aud: `${PUBLIC}${path}`, scope: 'mcp' });
  return fetch(`${stack.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

describe('K6 upstream header hygiene by allowlist', () => {
  it('K6 forged identity, routing and method-override headers never reach the upstream', async () => {
    const response = await post('/plain/mcp', { ...FORGED, 'X-MCP-Toolsets': 'all' });
    expect(response.status).toBe(200);
    const received = stack.upstream.requests.at(-1);
    // What the client sent on the allowlist, the gateway's own headers, and what undici adds for the hop.
    const allowed = ['accept', 'accept-encoding', 'accept-language', 'content-type', 'user-agent', 'authorization', 'x-request-id', 'host', 'connection', 'content-length'];
    expect(Object.keys(received?.headers ?? {}).filter((name) => !allowed.includes(name))).toEqual([]);
    for (const name of Object.keys(FORGED)) {
      if (name === 'X-Request-Id') continue;
      expect(received?.headers[name.toLowerCase()], name).toBeUndefined();
    }
    expect(received?.headers.authorization).toBe('Bearer upstream-secret');
    expect(received?.headers['x-mcp-toolsets']).toBeUndefined();
  });

  it("K6 X-Request-Id upstream is the gateway's request id, not a client-forged value", async () => {
    await post('/plain/mcp', { 'X-Request-Id': 'forged id with spaces' });
    const forwarded = stack.upstream.requests.at(-1)?.headers['x-request-id'];
    expect(forwarded).toMatch(/^[0-9a-f-]{36}$/);
    await post('/plain/mcp', { 'X-Request-Id': 'trace-123' });
    // A well-formed client id is the gateway's id too (it is honoured for the logs), so it correlates end to end.
    expect(stack.upstream.requests.at(-1)?.headers['x-request-id']).toBe('trace-123');
  });

  it('K6 a route forwards what upstream.forward_headers names, and only that', async () => {
    await post('/toolsets/mcp', { 'X-MCP-Toolsets': 'repos,issues', 'X-MCP-Readonly': 'true' });
    const received = stack.upstream.requests.at(-1)?.headers ?? {};
    expect(received['x-mcp-toolsets']).toBe('repos,issues');
    expect(received['x-mcp-readonly']).toBeUndefined();
  });
});
