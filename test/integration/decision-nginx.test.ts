import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../helpers/gateway.js';
import type { TestIssuer } from '../helpers/issuer.js';
import { jwtRoute, startJwtStack, type JwtStack } from '../helpers/jwt-stack.js';
import { freePort } from '../helpers/net.js';
import type { TestUpstream } from '../helpers/upstream.js';

/**
 * The nginx front door end to end with a real nginx (Debian's package; `.ci/run` installs it) running the shipped
 * config/nginx/nginx.conf, ports moved to free ones: client → nginx → MCP upstream, the gateway deciding.
 */

const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((path) => spawnSync(path, ['-v']).status === 0);

let issuer: TestIssuer;
let upstream: TestUpstream;
let gw: RunningGateway;
let closeStack: JwtStack['close'] | undefined;
let nginx: ChildProcess;
let dir: string;
let nginxUrl: string;
let resource: string;

async function waitForNginx(url: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  throw new Error(`nginx did not start at ${url}; see ${dir}/error.log`);
}

beforeAll(async () => {
  if (!NGINX) throw new Error('nginx is not installed: apt-get install nginx (the decision door is tested against a real one)');
  const nginxPort = await freePort();
  nginxUrl = `http://127.0.0.1:${nginxPort}`;
  resource = `${nginxUrl}/calc/mcp`;
  ({ issuer, upstream, gw, close: closeStack } = await startJwtStack((target) => `
public_url: ${nginxUrl}
decision: { port: 0 }
routes:
${jwtRoute('calc', target, 'auth: { type: bearer, token: upstream-secret }')}
    sessions: { bind: false }
    policy: { scopes: [mcp], tools: { multiply: [calc:write] } }
`));
  const decision = gw.gateway.decision;
  if (!decision) throw new Error('decision listener not built');
  await decision.listen({ host: '127.0.0.1', port: 0 });
  const decisionPort = (decision.server.address() as AddressInfo).port;

  dir = await mkdtemp(join(tmpdir(), 'mcpgw-nginx-'));
  const shipped = await readFile(new URL('../../config/nginx/nginx.conf', import.meta.url), 'utf8');
  const config = shipped
    .replace('server 127.0.0.1:8181;', `server 127.0.0.1:${decisionPort};`)
    .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${gw.port};`)
    .replace('server 127.0.0.1:3000;', `server ${new URL(upstream.url).host};`)
    .replace('listen 8443;', `listen 127.0.0.1:${nginxPort};`);
  await writeFile(join(dir, 'nginx.conf'), config);
  nginx = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', `daemon off; pid ${join(dir, 'nginx.pid')};${process.getuid?.() === 0 ? ' user root;' : ''}`], {
    stdio: 'ignore',
  });
  await waitForNginx(`${nginxUrl}/.well-known/oauth-protected-resource/calc/mcp`);
});

afterAll(async () => {
  nginx?.kill('SIGTERM');
  await closeStack?.();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function post(headers: Record<string, string>, body: string): Promise<Response> {
  return fetch(`${nginxUrl}/calc/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

const call = (name: string) => JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: {} } });
const modern = (name: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name });

describe('nginx auth_request with the gateway deciding (config/nginx/nginx.conf)', () => {
  it('metadata is served through nginx by the gateway', async () => {
    const response = await fetch(`${nginxUrl}/.well-known/oauth-protected-resource/calc/mcp`);
    expect(await response.json()).toMatchObject({ resource });
  });

  it('no token → 401 with the gateway challenge and body; nothing reaches the upstream', async () => {
    const response = await post({}, call('add'));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${nginxUrl}/.well-known/oauth-protected-resource/calc/mcp", scope="mcp"`,
    );
    expect(await response.json()).toEqual({ error: 'missing_token', error_description: 'Authorization required' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('a token without the tool scope (2026-07-28 headers name the tool) → 403 naming every scope', async () => {
    const response = await post({ authorization: `Bearer ${await issuer.mint({ aud: resource, scope: 'mcp' })}`, ...modern('multiply') }, call('multiply'));
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(response.headers.get('www-authenticate')).toContain('scope="mcp calc:write"');
    expect(upstream.requests).toHaveLength(0);
  });

  it('allowed → the upstream answers; it sees the upstream credential, never the client token or its cookies', async () => {
    const token = await issuer.mint({ aud: resource, scope: 'mcp calc:write' });
    const response = await post({ authorization: `Bearer ${token}`, cookie: `session=${token}`, ...modern('multiply') }, call('multiply'));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: 3, result: { ok: true } });
    const received = upstream.requests.at(-1);
    expect(received?.headers.authorization).toBe('Bearer upstream-secret');
    expect(JSON.stringify(received)).not.toContain(token);
  });

  it('a refusal nginx would turn into 500 keeps the gateway status and body (400: 2025-11-25 request, body needed)', async () => {
    const before = upstream.requests.length;
    const response = await post({ authorization: `Bearer ${await issuer.mint({ aud: resource, scope: 'mcp' })}` }, call('add'));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: -32600 } });
    expect(upstream.requests.length).toBe(before);
  });
});
