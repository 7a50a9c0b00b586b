import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { RunningGateway } from '../helpers/gateway.js';
import type { TestIssuer } from '../helpers/issuer.js';
import { jwtRoute, startJwtStack, type JwtStack } from '../helpers/jwt-stack.js';
import { freePort } from '../helpers/net.js';
import { suiteValue } from '../helpers/suite-value.js';
import type { TestUpstream } from '../helpers/upstream.js';

/**
 * The nginx front door end to end with a real nginx (Debian's package and its JavaScript module; `.ci/run` installs
 * both) running the shipped configs, ports moved to free ones: client → nginx → MCP upstream, the gateway deciding.
 * - config/nginx/nginx.conf: auth_request, no body;
 * - config/nginx/nginx-with-body.conf: njs asks with the body.
 */

const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((path) => spawnSync(path, ['-v']).status === 0);
const SHIPPED = new URL('../../config/nginx/', import.meta.url);
const SECRET = 'a-decision-secret-of-at-least-32-characters';

interface NginxDoor {
  readonly issuer: TestIssuer;
  readonly upstream: TestUpstream;
  readonly gw: RunningGateway;
  readonly url: string;
  readonly resource: string;
}

async function waitForNginx(url: string, dir: string): Promise<void> {
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

/** The gateway deciding for nginx running the shipped `conf`, with its other shipped files beside it. */
function nginxDoor(conf: string): NginxDoor {
  return suiteValue('the nginx door', () => startNginxDoor(conf), stopNginxDoor);
}

interface RunningNginxDoor extends NginxDoor {
  readonly nginx: ChildProcess;
  readonly dir: string;
  readonly close: JwtStack['close'];
}

async function startNginxDoor(conf: string): Promise<RunningNginxDoor> {
  if (!NGINX) throw new Error('nginx is not installed: apt-get install nginx libnginx-mod-http-js (the decision door is tested against a real one)');
  const nginxPort = await freePort();
  const url = `http://127.0.0.1:${nginxPort}`;
  const stack = await startJwtStack((target) => `
public_url: ${url}
decision: { port: 0, proxy: nginx, secret: ${SECRET} }
trusted_proxies: [127.0.0.1]
allowed_hosts: ["127.0.0.1"]
routes:
${jwtRoute('calc', target, 'auth: { type: bearer, token: upstream-secret }')}
    sessions: { bind: false }
    policy: { scopes: [mcp], tools: { multiply: [calc:write] } }
`);
  const decision = stack.gw.gateway.decision;
  if (!decision) throw new Error('decision listener not built');
  await decision.listen({ host: '127.0.0.1', port: 0 });
  const decisionPort = (decision.server.address() as AddressInfo).port;

  const dir = await mkdtemp(join(tmpdir(), 'mcpgw-nginx-'));
  for (const file of ['mcp-upstream-headers.conf', 'mcp-decision.js']) await copyFile(new URL(file, SHIPPED), join(dir, file));
  const shipped = await readFile(new URL(conf, SHIPPED), 'utf8');
  const config = shipped
    .replace('server 127.0.0.1:8181;', `server 127.0.0.1:${decisionPort};`)
    .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${stack.gw.port};`)
    .replace('server 127.0.0.1:3000;', `server ${new URL(stack.upstream.url).host};`)
    .replace('listen 8443;', `listen 127.0.0.1:${nginxPort};`)
    .replace('REPLACE-WITH-THE-GATEWAY-DECISION-SECRET', SECRET);
  await writeFile(join(dir, 'nginx.conf'), config);
  const nginx = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', `daemon off; pid ${join(dir, 'nginx.pid')};${process.getuid?.() === 0 ? ' user root;' : ''}`], {
    stdio: 'ignore',
  });
  const door = { issuer: stack.issuer, upstream: stack.upstream, gw: stack.gw, url, resource: `${url}/calc/mcp`, nginx, dir, close: stack.close };
  // A door that never came up is still stopped: afterAll only sees a started one.
  await waitForNginx(`${url}/.well-known/oauth-protected-resource/calc/mcp`, dir).catch(async (error: unknown) => {
    await stopNginxDoor(door);
    throw error;
  });
  return door;
}

async function stopNginxDoor(door: RunningNginxDoor): Promise<void> {
  door.nginx.kill('SIGTERM');
  await door.close();
  await rm(door.dir, { recursive: true, force: true });
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

async function post(door: NginxDoor, headers: Record<string, string>, body: string): Promise<Answer> {
  const response = await request(`${door.url}/calc/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
}

const call = (name: string) => JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: {} } });
const modern = (name: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name });
const bearer = async (door: NginxDoor, scope: string) => `Bearer ${await door.issuer.mint({ aud: door.resource, scope })}`;

/** What a client might add hoping the MCP server trusts it: credentials, identity and routing headers. */
const FORGED = {
  'proxy-authorization': 'Bearer forged-proxy-credential',
  'x-forwarded-user': 'admin',
  'x-authenticated-userid': 'admin',
  'x-consumer-username': 'admin',
  'x-auth-request-email': 'admin@example.com',
  'x-original-url': '/admin',
  'x-http-method-override': 'DELETE',
  'x-mcp-decision-secret': SECRET,
};

function behavesLikeTheGateway(conf: string, door: NginxDoor): void {
  it(`${conf}: metadata is served through nginx by the gateway`, async () => {
    const response = await fetch(`${door.url}/.well-known/oauth-protected-resource/calc/mcp`);
    expect(await response.json()).toMatchObject({ resource: door.resource });
  });

  it(`${conf}: no token → 401 with the gateway challenge and body; nothing reaches the upstream`, async () => {
    const response = await post(door, {}, call('add'));
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe(`Bearer resource_metadata="${door.url}/.well-known/oauth-protected-resource/calc/mcp", scope="mcp"`);
    expect(JSON.parse(response.body)).toEqual({ error: 'missing_token', error_description: 'Authorization required' });
    expect(door.upstream.requests).toHaveLength(0);
  });

  it(`${conf}: allowed → the upstream sees the upstream credential and the MCP headers, never the client's token, cookies, credentials or identity headers`, async () => {
    const token = await door.issuer.mint({ aud: door.resource, scope: 'mcp calc:write' });
    const response = await post(door, { authorization: `Bearer ${token}`, cookie: `session=${token}`, 'mcp-session-id': 'session-1', ...FORGED }, call('multiply'));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ id: 3, result: { ok: true } });
    const received = door.upstream.requests.at(-1);
    expect(received?.headers.authorization).toBe('Bearer upstream-secret');
    expect(received?.headers['mcp-session-id']).toBe('session-1');
    expect(received?.body).toBe(call('multiply'));
    for (const name of ['cookie', ...Object.keys(FORGED)]) expect(received?.headers[name], name).toBeUndefined();
    expect(JSON.stringify(received)).not.toContain(token);
  });

  it(`${conf}: GET (the stream a client opens) is decided without a body and forwarded with the query`, async () => {
    const response = await request(`${door.url}/calc/mcp?resume=1`, { headers: { accept: 'text/event-stream', authorization: await bearer(door, 'mcp') } });
    await response.body.dump();
    expect(response.statusCode).toBe(200);
    expect(door.upstream.requests.at(-1)).toMatchObject({ method: 'GET', url: '/mcp?resume=1', body: '' });
  });

  it(`${conf}: a client-written Traefik description (X-Forwarded-Uri / X-Forwarded-Method: GET) → 400, nothing upstream`, async () => {
    const before = door.upstream.requests.length;
    const response = await post(door, { authorization: await bearer(door, 'mcp calc:write'), 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/calc/mcp' }, call('multiply'));
    expect(response.status).toBe(400);
    expect(door.upstream.requests.length).toBe(before);
  });

  it(`${conf}: a client-sent X-Forwarded-Host naming an allowed host does not pass a rebinding Host (nginx overwrites it)`, async () => {
    const before = door.upstream.requests.length;
    const response = await post(door, { host: 'rebound.attacker.test', 'x-forwarded-host': '127.0.0.1', authorization: await bearer(door, 'mcp calc:write') }, call('add'));
    expect(response.status).toBe(403);
    expect(door.upstream.requests.length).toBe(before);
  });
}

describe('nginx auth_request with the gateway deciding (config/nginx/nginx.conf)', () => {
  const door = nginxDoor('nginx.conf');
  behavesLikeTheGateway('nginx.conf', door);

  it('no body: Mcp-Name: add with the route scope only → 400 (the body may call multiply); nothing upstream', async () => {
    const before = door.upstream.requests.length;
    const response = await post(door, { authorization: await bearer(door, 'mcp'), ...modern('add') }, call('multiply'));
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: -32600 } });
    expect(door.upstream.requests.length).toBe(before);
  });

  it('no body: a token with every scope the route names passes', async () => {
    expect((await post(door, { authorization: await bearer(door, 'mcp calc:write') }, call('multiply'))).status).toBe(200);
  });
});

describe('nginx with njs asking with the body (config/nginx/nginx-with-body.conf)', () => {
  const door = nginxDoor('nginx-with-body.conf');
  behavesLikeTheGateway('nginx-with-body.conf', door);

  it('a 2025-11-25 tools/call is decided by its body: multiply without calc:write → 403 naming every scope; add → 200', async () => {
    const before = door.upstream.requests.length;
    const refused = await post(door, { authorization: await bearer(door, 'mcp') }, call('multiply'));
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toContain('scope="mcp calc:write"');
    expect(door.upstream.requests.length).toBe(before);
    const allowed = await post(door, { authorization: await bearer(door, 'mcp') }, call('add'));
    expect(allowed.status).toBe(200);
    expect(door.upstream.requests.at(-1)?.body).toBe(call('add'));
  });

  it('Mcp-Name: add on a multiply body → 400 HeaderMismatch; nothing upstream', async () => {
    const before = door.upstream.requests.length;
    const response = await post(door, { authorization: await bearer(door, 'mcp calc:write'), ...modern('add') }, call('multiply'));
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: -32020 } });
    expect(door.upstream.requests.length).toBe(before);
  });

  it('the decision listener down → 503 with Retry-After, never let through', async () => {
    const decision = door.gw.gateway.decision;
    if (!decision) throw new Error('decision listener not built');
    const before = door.upstream.requests.length;
    await decision.close();
    const response = await post(door, { authorization: await bearer(door, 'mcp calc:write') }, call('add'));
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(door.upstream.requests.length).toBe(before);
  });
});
