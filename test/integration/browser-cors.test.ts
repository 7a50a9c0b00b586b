import { describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';

/**
 * What a browser-based MCP client (a page doing discovery and MCP requests itself, e.g. MCP Inspector's "Direct"
 * mode) needs from the gateway: preflights that allow the headers it really sends, and answers it may read.
 * The matrix (`npm run test:clients`) proves the same end to end in Chromium.
 */
const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;
const APP = 'https://app.example.test';
/** Every request header of the Streamable HTTP transport, 2026-07-28 `Mcp-Param-*` included. */
const MCP_REQUEST_HEADERS =
  'accept, authorization, content-type, last-event-id, mcp-method, mcp-name, mcp-param-region, mcp-protocol-version, mcp-session-id';

const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('calc', target, 'identity: { header: X-Gateway-Identity }')}
    scopes_supported: [mcp:tools]
    policy: { scopes: [mcp:tools] }
${jwtRoute('app', target)}
    cors: { allowed_origins: ["${APP}"] }
`);

function preflight(path: string, origin: string, requestHeaders: string, method = 'POST'): Promise<Response> {
  return fetch(`${stack.gw.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders },
  });
}

describe('browser clients: public documents', () => {
  it.each([
    ['protected resource metadata (shape A)', '/.well-known/oauth-protected-resource/calc/mcp'],
    ['protected resource metadata (shape B)', '/.well-known/oauth-protected-resource'],
    ['the gateway JWKS', '/.well-known/jwks.json'],
  ])('%s: the preflight allows content-type, mcp-protocol-version and authorization', async (_name, path) => {
    const response = await preflight(path, APP, 'content-type,mcp-protocol-version,authorization', 'GET');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toBe('content-type, mcp-protocol-version, authorization');
    expect(response.headers.get('access-control-allow-methods')).toContain('GET');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('the JWKS itself is readable from any origin', async () => {
    const response = await fetch(`${stack.gw.url}/.well-known/jwks.json`, { headers: { origin: APP } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('browser clients: MCP endpoint', () => {
  it('A11 a preflight allows every MCP request header, Mcp-Param-* included, and nothing else', async () => {
    const response = await preflight('/calc/mcp', APP, `${MCP_REQUEST_HEADERS}, x-evil`);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toBe(MCP_REQUEST_HEADERS);
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE, OPTIONS');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(stack.upstream.requests).toHaveLength(0);
  });

  it('A11 a listed origin gets its own name back, never `*` and never credentials', async () => {
    const response = await preflight('/app/mcp', APP, 'authorization, mcp-session-id');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(response.headers.get('access-control-allow-headers')).toBe('authorization, mcp-session-id');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('vary')).toMatch(/Origin/);
  });

  it('A11 a disallowed origin gets nothing: no CORS header, no preflight grant', async () => {
    const response = await preflight('/app/mcp', 'https://evil.example', MCP_REQUEST_HEADERS);
    expect(response.status).toBe(403);
    for (const name of ['access-control-allow-origin', 'access-control-allow-headers', 'access-control-allow-methods']) {
      expect(response.headers.get(name)).toBeNull();
    }
  });

  it('answers expose WWW-Authenticate, Mcp-Session-Id and MCP-Protocol-Version (the 401 challenge and a success)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    const headers = { origin: APP, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const challenge = await fetch(`${stack.gw.url}/calc/mcp`, { method: 'POST', headers, body });
    expect(challenge.status).toBe(401);
    const token = await stack.issuer.mint({ aud: CALC, scope: 'mcp:tools' });
    const success = await fetch(`${stack.gw.url}/calc/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}` }, body });
    expect(success.status).toBe(200);
    for (const response of [challenge, success]) {
      const exposed = (response.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/,\s*/);
      expect(exposed).toEqual(expect.arrayContaining(['www-authenticate', 'mcp-session-id', 'mcp-protocol-version']));
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
    }
  });
});
