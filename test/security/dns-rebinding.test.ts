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
});

afterAll(async () => {
  await Promise.all([local.close(), remote.close(), listed.close()]);
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
