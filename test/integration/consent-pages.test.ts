import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleGateway } from '../../src/gateway/assemble.js';
import { devAuthServerOptionsFromConfig, startDevAuthServer, type DevAuthServer } from '../../src/authserver/index.js';
import { createMemoryStore } from '../../src/cache/memory-store.js';
import type { Gateway } from '../../src/gateway/build.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { compileOrThrow } from '../helpers/gateway.js';
import { freePort } from '../helpers/net.js';

/** The consent pages as HTTP: cookies, headers, redirects and refusals (the full flow: user-oauth.test.ts). */

let as: DevAuthServer;
let port: number;
const gateways: Gateway[] = [];

function config(publicUrl: string, issuer = `http://127.0.0.1:${port}`) {
  return compileOrThrow(`
public_url: ${publicUrl}
consent:
  login: { client_id: gateway-consent, client_secret: consent-secret }
routes:
  - name: notes
    path: /notes/mcp
    upstream:
      url: http://127.0.0.1:3002/mcp
      auth: { type: user_oauth, issuer: ${issuer}, client_id: gw, scope: [notes:read], resource: http://127.0.0.1:3002/mcp }
    authorization_servers: [${issuer}]
    tokens: { jwt: { issuer: ${issuer}, algorithms: [ES256] } }
`);
}

function gatewayFor(publicUrl: string, issuer?: string): Gateway {
  const gateway = assembleGateway(config(publicUrl, issuer), { logger: captureLogs().logger, cache: createMemoryStore() });
  gateways.push(gateway);
  return gateway;
}

beforeAll(async () => {
  port = await freePort();
  as = await startDevAuthServer(devAuthServerOptionsFromConfig(config('https://gw.example.test'), { autoApprove: true }));
});

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()));
  await as.close();
});

describe('consent pages over HTTP', () => {
  it('https public_url: sign-in redirect (OIDC, PKCE S256, state, nonce, exact callback, no resource) with a __Host- cookie', async () => {
    const response = await gatewayFor('https://gw.example.test').app.inject({ method: 'GET', url: '/consent/grants' });
    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${as.issuer}/auth`);
    const params = Object.fromEntries(location.searchParams);
    expect(params).toMatchObject({
      client_id: 'gateway-consent',
      response_type: 'code',
      scope: 'openid',
      code_challenge_method: 'S256',
      redirect_uri: 'https://gw.example.test/consent/login/callback',
    });
    expect(params.state).toMatch(/^[\w-]{43}$/);
    expect(params.nonce).toMatch(/^[\w-]{43}$/);
    expect(params.resource).toBeUndefined();
    expect(response.headers['set-cookie']).toMatch(/^__Host-mcpgw-consent=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Secure; Max-Age=\d+$/);
    expect(response.headers['referrer-policy']).toBe('no-referrer');
  });

  it('http loopback public_url: a plain cookie name, SameSite=Lax, no Secure', async () => {
    const response = await gatewayFor('http://127.0.0.1:8080').app.inject({ method: 'GET', url: '/consent/grants' });
    expect(response.headers['set-cookie']).toMatch(/^mcpgw-consent=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
  });

  it('every page is generic, framed by nothing, loads nothing, and tells other origins nothing through Referer (same-origin: its own forms keep a real Origin): a malformed link', async () => {
    const response = await gatewayFor('https://gw.example.test').app.inject({ method: 'GET', url: '/consent/connect?link=<script>alert(1)</script>' });
    expect(response.statusCode).toBe(400);
    expect(response.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'referrer-policy': 'same-origin',
    });
    expect(response.body).toContain('Link expired');
    expect(response.body).not.toContain('<script>');
  });

  it('a consent form without a flow cookie, or not a form, changes nothing', async () => {
    const app = gatewayFor('https://gw.example.test').app;
    const noCookie = await app.inject({ method: 'POST', url: '/consent/decide', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'csrf=x&decision=allow' });
    expect(noCookie.statusCode).toBe(400);
    const json = await app.inject({ method: 'POST', url: '/consent/decide', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(json.statusCode).toBe(400);
  });

  it('the sign-in authorization server down → 503 page', async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const response = await gatewayFor('https://gw.example.test', down).app.inject({ method: 'GET', url: '/consent/grants' });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('Try again later');
  });

  it('without user_oauth routes the consent paths are not found', async () => {
    const plain = assembleGateway(
      compileOrThrow(`
public_url: https://gw.example.test
routes:
  - { name: calc, path: /calc/mcp, upstream: { url: "http://127.0.0.1:3001/mcp" }, authorization_servers: [https://as.example.test], tokens: { jwt: { issuer: https://as.example.test } } }
`),
      { logger: captureLogs().logger, cache: createMemoryStore() },
    );
    gateways.push(plain);
    expect((await plain.app.inject({ method: 'GET', url: '/consent/grants' })).statusCode).toBe(404);
  });
});
