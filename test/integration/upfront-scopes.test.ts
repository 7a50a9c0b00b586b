import { describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack, type JwtRouteTarget } from '../helpers/jwt-stack.js';

const PUBLIC = 'https://gw.example.test';

/** The same policy twice: minimal challenges (the default) and everything up front. */
function route(target: JwtRouteTarget, name: string, upfront: boolean): string {
  return `
${jwtRoute(name, target)}
    scopes_supported: [mcp:tools]
    policy:
      scopes: [mcp:tools]
      tools: { multiply: [calc:write], add: [calc:read] }
      implies: { "calc:write": [calc:read] }
      upfront_scopes: ${upfront}`;
}

const stack = setupJwtStack((target) => `public_url: ${PUBLIC}\nroutes:${route(target, 'minimal', false)}${route(target, 'upfront', true)}\n`);

function callTool(path: string, name: string, token?: string): Promise<Response> {
  return fetch(`${stack.gw.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
  });
}

function challengeScope(response: Response): string | undefined {
  return /scope="([^"]*)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
}

describe('policy.upfront_scopes', () => {
  it('off (default): the 401 challenge names only the route scopes', async () => {
    expect(challengeScope(await callTool('/minimal/mcp', 'add'))).toBe('mcp:tools');
  });

  // The widened scopes_supported is "mcp:tools calc:write": a challenge naming the same scopes names them in another
  // order (test/unit/decision/challenge-scopes.test.ts).
  it('on: the 401 challenge names every scope an operation can require, an implies chain by its broadest scope', async () => {
    const response = await callTool('/upfront/mcp', 'add');
    expect(response.status).toBe(401);
    expect(challengeScope(response)).toBe('calc:write mcp:tools');
    const invalid = await callTool('/upfront/mcp', 'add', 'not-a-token');
    expect(invalid.status).toBe(401);
    expect(challengeScope(invalid)).toBe('calc:write mcp:tools');
  });

  it('on: protected resource metadata widens scopes_supported to the same scopes', async () => {
    const upfront = (await (await fetch(`${stack.gw.url}/.well-known/oauth-protected-resource/upfront/mcp`)).json()) as Record<string, unknown>;
    expect(upfront.scopes_supported).toEqual(['mcp:tools', 'calc:write']);
    const minimal = (await (await fetch(`${stack.gw.url}/.well-known/oauth-protected-resource/minimal/mcp`)).json()) as Record<string, unknown>;
    expect(minimal.scopes_supported).toEqual(['mcp:tools']);
  });

  it('on: a token with the challenged scopes may call every tool; a narrower one still gets the 403 step-up', async () => {
    const everything = await stack.issuer.mint({ aud: `${PUBLIC}/upfront/mcp`, scope: 'mcp:tools calc:write' });
    expect((await callTool('/upfront/mcp', 'multiply', everything)).status).toBe(200);
    expect((await callTool('/upfront/mcp', 'add', everything)).status).toBe(200);
    const narrow = await stack.issuer.mint({ aud: `${PUBLIC}/upfront/mcp`, scope: 'mcp:tools' });
    const refused = await callTool('/upfront/mcp', 'multiply', narrow);
    expect(refused.status).toBe(403);
    expect(challengeScope(refused)).toBe('calc:write mcp:tools');
  });
});
