import { describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';
import { rawRequest } from '../helpers/raw-http.js';

/** K7: every request on an MCP path authenticates first; which methods exist is told only to a caller with a valid token. */

const PUBLIC = 'https://gw.example.test';
const PRM = `${PUBLIC}/.well-known/oauth-protected-resource/calc/mcp`;

const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('calc', target)}
    policy: { scopes: [mcp] }
`);

const METHODS = ['HEAD', 'PUT', 'PATCH', 'OPTIONS', 'PROPFIND', 'TRACE'];

describe('K7 HEAD and every other method authenticate first', () => {
  it.each(METHODS)('K7 %s without a token → 401 with the challenge, nothing upstream', async (method) => {
    const response = await rawRequest(stack.gw.port, [`${method} /calc/mcp HTTP/1.1`, 'Host: gw']);
    expect(response.status).toBe(401);
    expect(response.head.toLowerCase()).toContain(`www-authenticate: bearer resource_metadata="${PRM}", scope="mcp"`.toLowerCase());
    expect(stack.upstream.requests).toHaveLength(0);
  });

  it.each(['HEAD', 'PUT', 'TRACE'])('K7 %s with an invalid token → 401 invalid_token', async (method) => {
    const response = await rawRequest(stack.gw.port, [`${method} /calc/mcp HTTP/1.1`, 'Host: gw', 'Authorization: Bearer not.a.jwt']);
    expect(response.status).toBe(401);
    expect(response.head).toContain('error="invalid_token"');
  });

  it.each(['HEAD', 'PUT', 'PATCH', 'PROPFIND'])('K7 %s with a valid token → 405 with Allow, nothing upstream', async (method) => {
    const token = await stack.issuer.mint({ aud: `${PUBLIC}/calc/mcp`, scope: 'mcp' });
    const response = await rawRequest(stack.gw.port, [`${method} /calc/mcp HTTP/1.1`, 'Host: gw', `Authorization: Bearer ${token}`]);
    expect(response.status).toBe(405);
    expect(response.head.toLowerCase()).toContain('allow: get, post, delete, options');
    expect(stack.upstream.requests).toHaveLength(0);
  });

  it('K7 a plain OPTIONS (no preflight) with a valid token → 204 with Allow', async () => {
    const token = await stack.issuer.mint({ aud: `${PUBLIC}/calc/mcp`, scope: 'mcp' });
    const response = await rawRequest(stack.gw.port, ['OPTIONS /calc/mcp HTTP/1.1', 'Host: gw', `Authorization: Bearer ${token}`]);
    expect(response.status).toBe(204);
    expect(response.head.toLowerCase()).toContain('allow: get, post, delete, options');
  });

  it('K7 a CORS preflight is still answered without a token', async () => {
    const response = await rawRequest(stack.gw.port, ['OPTIONS /calc/mcp HTTP/1.1', 'Host: gw', 'Origin: https://app.example', 'Access-Control-Request-Method: POST']);
    expect(response.status).toBe(204);
    expect(stack.upstream.requests).toHaveLength(0);
  });
});
