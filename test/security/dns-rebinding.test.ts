import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { jwtRoute } from '../helpers/jwt-stack.js';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

/**
 * G6 / issue 12 §4: DNS rebinding. A gateway on a loopback public_url answers only loopback Host names and
 * loopback (or explicitly allowed) Origins, before authentication and whatever token comes with the request.
 */

let issuer: TestIssuer;
let upstream: TestUpstream;
let local: RunningGateway;
let remote: RunningGateway;
let listed: RunningGateway;
let behindIngress: RunningGateway;

const route = (name = 'calc', extra = '') => `
${jwtRoute(name, { issuer, upstream })}
    sessions: { bind: false }
    ${extra}`;

beforeAll(async () => {
  issuer = await startTestIssuer();
  upstream = await startTestUpstream();
  // calc answers any Origin (the default "*"); app lists one Origin explicitly.
  local = await startGateway(`public_url: http://127.0.0.1:8080\nroutes:${route()}${route('app', 'cors: { allowed_origins: ["https://app.example"] }')}`);
  remote = await startGateway(`public_url: https://gw.example.test\nroutes:${route()}`);
  listed = await startGateway(`public_url: https://gw.example.test\nallowed_hosts: [gw.example.test, "127.0.0.1"]\nroutes:${route()}`);
  behindIngress = await startGateway(`public_url: https://gw.example.test\nallowed_hosts: [gw.example.test]\ntrusted_proxies: [127.0.0.1]\nroutes:${route()}`);
});

afterAll(async () => {
  await Promise.all([local.close(), remote.close(), listed.close(), behindIngress.close()]);
  await Promise.all([issuer.close(), upstream.close()]);
});

async function send(gateway: RunningGateway, resource: string, headers: Record<string, string>, name = 'calc'): Promise<number> {
  const token = await issuer.mint({ aud: `${resource}/${name}/mcp` });
  const response = await request(`${gateway.url}/${name}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
  await response.body.dump();
  return response.statusCode;
}

const LOCAL = 'http://127.0.0.1:8080';

describe('G6 DNS rebinding protection on a loopback gateway (valid token every time)', () => {
  it.each<[string, Record<string, string>, number]>([
    ['Host and Origin of the rebinding page', { host: 'evil.example.com', origin: 'http://evil.example.com' }, 403],
    ['a rebinding Host alone', { host: 'evil.example.com' }, 403],
    ['a loopback Host with a foreign Origin', { host: '127.0.0.1:8080', origin: 'http://evil.example.com' }, 403],
    ['a Host that does not parse', { host: 'ev il' }, 403],
    ['a loopback Host, no Origin (CLI clients)', { host: '127.0.0.1:8080' }, 200],
    ['localhost and a loopback Origin (a local web client)', { host: 'localhost:8080', origin: 'http://localhost:6274' }, 200],
    ['[::1] and a loopback Origin', { host: '[::1]:8080', origin: 'http://127.0.0.1:6274' }, 200],
  ])('%s → %i', async (_name, headers, status) => {
    const before = upstream.requests.length;
    expect(await send(local, LOCAL, headers)).toBe(status);
    expect(upstream.requests.length - before).toBe(status === 200 ? 1 : 0);
  });

  it('an Origin a route lists explicitly passes; "*" never lets a foreign Origin through on a loopback gateway', async () => {
    expect(await send(local, LOCAL, { host: '127.0.0.1:8080', origin: 'https://app.example' }, 'app')).toBe(200);
    expect(await send(local, LOCAL, { host: '127.0.0.1:8080', origin: 'https://other.example' }, 'app')).toBe(403);
  });
});

describe('public deployments', () => {
  it('keep answering any Host by default (the Origin policy is the route cors setting)', async () => {
    expect(await send(remote, 'https://gw.example.test', { host: 'evil.example.com' })).toBe(200);
  });

  it.each<[string, string, number]>([
    ['a listed name', 'gw.example.test', 200],
    ['a listed name with a port', 'gw.example.test:443', 200],
    ['a listed address', '127.0.0.1:9999', 200],
    ['an unlisted name', 'evil.example.com', 403],
  ])('allowed_hosts: %s → %i', async (_name, host, status) => {
    expect(await send(listed, 'https://gw.example.test', { host })).toBe(status);
  });
});

describe('X-Forwarded-Host counts only from trusted_proxies', () => {
  it.each<[string, Record<string, string>, number]>([
    ['a loopback gateway, a rebinding Host and a client-sent loopback X-Forwarded-Host', { host: 'evil.example.com', 'x-forwarded-host': '127.0.0.1:8080' }, 403],
    ['a loopback gateway, a loopback Host and a client-sent X-Forwarded-Host', { host: '127.0.0.1:8080', 'x-forwarded-host': 'evil.example.com' }, 200],
  ])('untrusted peer: %s → %i (the Host header decides)', async (_name, headers, status) => {
    expect(await send(local, LOCAL, headers)).toBe(status);
  });

  it('allowed_hosts with an untrusted peer: a listed X-Forwarded-Host does not admit an unlisted Host', async () => {
    expect(await send(listed, 'https://gw.example.test', { host: 'evil.example.com', 'x-forwarded-host': 'gw.example.test' })).toBe(403);
  });

  it.each<[string, Record<string, string>, number]>([
    ['the Host the client used, forwarded by the ingress', { host: 'gateway.svc.cluster.local', 'x-forwarded-host': 'gw.example.test' }, 200],
    ['a rebinding Host, forwarded by the ingress', { host: 'gw.example.test', 'x-forwarded-host': 'evil.example.com' }, 403],
    ['no X-Forwarded-Host: the Host header', { host: 'gw.example.test' }, 200],
  ])('trusted ingress: %s → %i', async (_name, headers, status) => {
    expect(await send(behindIngress, 'https://gw.example.test', headers)).toBe(status);
  });
});
