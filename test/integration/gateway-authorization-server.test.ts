import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';
import type { DevAuthServer } from '../../src/authserver/types.js';
import {
  IDP_CLIENT,
  TestBrowser,
  TestOAuthClient,
  connectSdkClient,
  callToolStatus,
  gatewayAsYaml,
  signingKeySet,
  startEnterpriseIdp,
  startGatewayAs,
  type RunningGatewayAs,
} from '../helpers/gateway-as.js';
import { freePort } from '../helpers/net.js';

const REDIRECT = 'http://127.0.0.1:9/callback';

let calculator: Calculator;
let idp: DevAuthServer;
let gateway: RunningGatewayAs;
let resource: string;
const people = { next: 'alice', groups: { alice: ['calc-admins'], bob: ['staff'] } as Record<string, string[]> };

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function postForm(path: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function register(metadata: Record<string, unknown> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gateway.url}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Raw test client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function authorizationUrl(clientId: string, challenge: string, params: Record<string, string> = {}): URL {
  const url = new URL(`${gateway.url}/oauth/authorize`);
  const all = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    resource,
    scope: 'mcp:tools',
    state: 'state-42',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  };
  for (const [key, value] of Object.entries(all)) url.searchParams.set(key, value);
  return url;
}

/** Registers a client, signs `person` in and redeems the code: the token answer. */
async function tokensFor(person: string, scope = 'mcp:tools', browser = new TestBrowser()) {
  people.next = person;
  const client = await register();
  const clientId = String(client.body.client_id);
  const { verifier, challenge } = pkce();
  const { code } = await browser.authorize(authorizationUrl(clientId, challenge, { scope }), REDIRECT);
  const answer = await postForm('/oauth/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: clientId,
    resource,
  });
  expect(answer.status).toBe(200);
  return { clientId, browser, tokens: answer.body as { access_token: string; refresh_token?: string; scope: string } };
}

/** Client ID Metadata Documents on loopback http, each path behaving as its test needs. */
let documents: Server;
let documentsUrl: string;
const documentPaths: Record<string, (url: string) => { status: number; headers?: Record<string, string>; body?: string; hang?: boolean }> = {
  '/good.json': (url) => ({
    status: 200,
    body: JSON.stringify({ client_id: url, client_name: 'Metadata document client', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' }),
  }),
  '/wrong-id.json': () => ({ status: 200, body: JSON.stringify({ client_id: 'https://attacker.example/client.json', client_name: 'x', redirect_uris: [REDIRECT] }) }),
  '/redirect.json': () => ({ status: 302, headers: { location: '/good.json' } }),
  '/huge.json': (url) => ({ status: 200, body: JSON.stringify({ client_id: url, client_name: 'x'.repeat(100_000), redirect_uris: [REDIRECT] }) }),
  '/slow.json': () => ({ status: 200, hang: true }),
};

beforeAll(async () => {
  documents = createServer((request, response) => {
    const url = `${documentsUrl}${request.url ?? ''}`;
    const answer = documentPaths[request.url ?? '']?.(url) ?? { status: 404 };
    if (answer.hang) return;
    response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    response.end(answer.body);
  });
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  calculator = await startCalculator();
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  resource = `${publicUrl}/calc/mcp`;
  idp = await startEnterpriseIdp(publicUrl, people);
  gateway = await startGatewayAs(gatewayAsYaml({ idpIssuer: idp.issuer, upstream: calculator.url, port }), {
    AS_KEYS: await signingKeySet(),
    IDP_SECRET: IDP_CLIENT.secret,
  });
});

afterAll(async () => {
  documents?.closeAllConnections();
  documents?.close();
  await gateway?.close();
  await idp?.close();
  await calculator?.close();
});

describe('the gateway as authorization server: metadata', () => {
  it('serves RFC 8414 metadata with PKCE S256 only, metadata documents, RFC 9207 iss and every endpoint', async () => {
    const response = await fetch(`${gateway.url}/.well-known/oauth-authorization-server`);
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: gateway.url,
      authorization_endpoint: `${gateway.url}/oauth/authorize`,
      token_endpoint: `${gateway.url}/oauth/token`,
      registration_endpoint: `${gateway.url}/register`,
      revocation_endpoint: `${gateway.url}/oauth/revoke`,
      introspection_endpoint: `${gateway.url}/oauth/introspect`,
      jwks_uri: `${gateway.url}/oauth/jwks`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('serves the same document for OpenID Connect discovery', async () => {
    const response = await fetch(`${gateway.url}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { issuer: string }).issuer).toBe(gateway.url);
  });

  it('lists itself as the authorization server of a route without tokens', async () => {
    const response = await fetch(`${gateway.url}/.well-known/oauth-protected-resource/calc/mcp`);
    expect(((await response.json()) as { authorization_servers: string[] }).authorization_servers).toEqual([gateway.url]);
  });

  it('publishes the public signing keys only', async () => {
    const { keys } = (await (await fetch(`${gateway.url}/oauth/jwks`)).json()) as { keys: Record<string, unknown>[] };
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toHaveProperty('d');
  });
});

describe('the gateway as authorization server: an issuer with a path', () => {
  it('serves metadata at the RFC 8414 path form and completes an authorization under that path', async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const pathIdp = await startEnterpriseIdp(publicUrl, people);
    const yaml = gatewayAsYaml({ idpIssuer: pathIdp.issuer, upstream: calculator.url, port }).replace(
      'authorization_server:\n',
      `authorization_server:\n  issuer: ${publicUrl}/as\n`,
    );
    const withPath = await startGatewayAs(yaml, { AS_KEYS: await signingKeySet(), IDP_SECRET: IDP_CLIENT.secret });
    try {
      const metadata = (await (await fetch(`${publicUrl}/.well-known/oauth-authorization-server/as`)).json()) as Record<string, string>;
      expect(metadata).toMatchObject({ issuer: `${publicUrl}/as`, authorization_endpoint: `${publicUrl}/as/oauth/authorize`, registration_endpoint: `${publicUrl}/as/register` });
      expect(((await (await fetch(`${publicUrl}/as/.well-known/openid-configuration`)).json()) as { issuer: string }).issuer).toBe(`${publicUrl}/as`);
      const prm = (await (await fetch(`${publicUrl}/.well-known/oauth-protected-resource/calc/mcp`)).json()) as { authorization_servers: string[] };
      expect(prm.authorization_servers).toEqual([`${publicUrl}/as`]);

      const registered = (await (
        await fetch(metadata.registration_endpoint ?? '', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client_name: 'Path client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
        })
      ).json()) as { client_id: string };
      people.next = 'alice';
      const { challenge } = pkce();
      const start = new URL(metadata.authorization_endpoint ?? '');
      const params = { response_type: 'code', client_id: registered.client_id, redirect_uri: REDIRECT, resource: `${publicUrl}/calc/mcp`, scope: 'mcp:tools', state: 's', code_challenge: challenge, code_challenge_method: 'S256' };
      for (const [key, value] of Object.entries(params)) start.searchParams.set(key, value);
      const { params: answer } = await new TestBrowser().authorize(start, REDIRECT);
      expect(answer.get('iss')).toBe(`${publicUrl}/as`);
    } finally {
      await withPath.close();
      await pathIdp.close();
    }
  });
});

describe('the gateway as authorization server: the official SDK client', () => {
  it('registers dynamically, signs the person in at the IdP, asks consent and calls a tool', async () => {
    people.next = 'alice';
    const browser = new TestBrowser();
    const oauth = new TestOAuthClient(browser, { redirectUrl: REDIRECT });
    const client = await connectSdkClient(resource, oauth, 'sdk-test');
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(JSON.stringify(result.content)).toContain('5');
    await client.close();
    const page = browser.consentPages.at(-1) ?? '';
    expect(page).toContain('SDK test client');
    expect(page).toContain('127.0.0.1:9');
    expect(page).toContain('Calculator');
    const claims = decodeJwt(oauth.tokens()?.access_token ?? '');
    expect(claims).toMatchObject({ iss: gateway.url, aud: resource, sub: 'alice' });
  });

  it('steps up when the SDK answers a 403 insufficient_scope with a refresh (no scope named): the consent covers it', async () => {
    people.next = 'alice';
    const browser = new TestBrowser();
    const oauth = new TestOAuthClient(browser, { redirectUrl: REDIRECT });
    const client = await connectSdkClient(resource, oauth, 'sdk-test');
    expect(oauth.tokens()?.scope).not.toContain('calc:write');
    const result = await client.callTool({ name: 'multiply', arguments: { x: 6, y: 7 } });
    expect(JSON.stringify(result.content)).toContain('42');
    expect(oauth.tokens()?.scope).toContain('calc:write');
    expect(browser.consentPages).toHaveLength(1);
    await client.close();
  });

  it('identifies a client by its Client ID Metadata Document URL', async () => {
    people.next = 'alice';
    const browser = new TestBrowser();
    const oauth = new TestOAuthClient(browser, { redirectUrl: REDIRECT, clientMetadataUrl: `${documentsUrl}/good.json` });
    const client = await connectSdkClient(resource, oauth, 'sdk-test');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('add');
    await client.close();
    expect(browser.consentPages.at(-1)).toContain('Metadata document client');
  });
});

describe('the gateway as authorization server: scopes and entitlements', () => {
  it('grants an entitled person the scope asked for', async () => {
    const { tokens } = await tokensFor('alice', 'mcp:tools calc:write');
    expect(tokens.scope.split(' ').sort()).toEqual(['calc:write', 'mcp:tools']);
    expect(await callToolStatus(resource, tokens.access_token, 'multiply')).toBe(200);
  });

  it('never grants a scope the person is not entitled to', async () => {
    const { tokens, browser } = await tokensFor('bob', 'mcp:tools calc:write');
    expect(tokens.scope).toBe('mcp:tools');
    expect(browser.consentPages.at(-1)).toContain('Not granted');
    expect(await callToolStatus(resource, tokens.access_token, 'multiply')).toBe(403);
    expect(await callToolStatus(resource, tokens.access_token, 'add')).toBe(200);
  });

  it('lets a refresh ask for a consented scope beyond the first request (step-up by refresh)', async () => {
    const { tokens, clientId } = await tokensFor('alice', 'mcp:tools');
    expect(tokens.scope).toBe('mcp:tools');
    expect(await callToolStatus(resource, tokens.access_token, 'multiply')).toBe(403);
    const refreshed = await postForm('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token ?? '',
      client_id: clientId,
      resource,
      scope: 'mcp:tools calc:write',
    });
    expect(refreshed.status).toBe(200);
    expect(String(refreshed.body.scope).split(' ').sort()).toEqual(['calc:write', 'mcp:tools']);
    expect(await callToolStatus(resource, String(refreshed.body.access_token), 'multiply')).toBe(200);
  });

  it('ends a remembered consent beyond what the person is still entitled to at their next sign-in', async () => {
    people.groups.dave = ['calc-admins'];
    const { tokens, clientId } = await tokensFor('dave', 'mcp:tools calc:write');
    expect(tokens.scope.split(' ').sort()).toEqual(['calc:write', 'mcp:tools']);
    people.groups.dave = [];
    const later = new TestBrowser();
    const { verifier, challenge } = pkce();
    const { code } = await later.authorize(authorizationUrl(clientId, challenge, { scope: 'mcp:tools calc:write' }), REDIRECT);
    expect(later.consentPages).toHaveLength(1);
    const answer = await postForm('/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
    expect(answer.body.scope).toBe('mcp:tools');
    const old = await postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '', client_id: clientId, resource });
    expect(old.body.error).toBe('invalid_grant');
  });

  it('refuses a refresh asking for a scope the person is not entitled to', async () => {
    const { tokens, clientId } = await tokensFor('bob', 'mcp:tools');
    const refreshed = await postForm('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token ?? '',
      client_id: clientId,
      resource,
      scope: 'mcp:tools calc:write',
    });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_scope');
  });
});

describe('the gateway as authorization server: refresh rotation, reuse and revocation', () => {
  it('rotates refresh tokens, and reuse of a rotated one revokes the whole family', async () => {
    const { tokens, clientId } = await tokensFor('alice');
    const first = await postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '', client_id: clientId, resource });
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).not.toBe(tokens.refresh_token);
    const reuse = await postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '', client_id: clientId, resource });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    const successor = await postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token), client_id: clientId, resource });
    expect(successor.status).toBe(400);
    expect(successor.body.error).toBe('invalid_grant');
  });

  it('revokes a refresh token (RFC 7009)', async () => {
    const { tokens, clientId } = await tokensFor('alice');
    const revoked = await postForm('/oauth/revoke', { token: tokens.refresh_token ?? '', token_type_hint: 'refresh_token', client_id: clientId });
    expect(revoked.status).toBe(200);
    const refreshed = await postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '', client_id: clientId, resource });
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it('remembers consent per person and client: the second authorization shows no page', async () => {
    const { clientId, browser } = await tokensFor('alice');
    const pages = browser.consentPages.length;
    const { challenge } = pkce();
    await browser.authorize(authorizationUrl(clientId, challenge), REDIRECT);
    expect(browser.consentPages.length).toBe(pages);
  });
});

describe('the gateway as authorization server: bad input', () => {
  it('answers an unknown resource with invalid_target', async () => {
    people.next = 'alice';
    const client = await register();
    const { challenge } = pkce();
    const outcome = await new TestBrowser().navigate(authorizationUrl(String(client.body.client_id), challenge, { resource: 'https://elsewhere.example/mcp' }), REDIRECT);
    expect(outcome.kind).toBe('redirect');
    if (outcome.kind !== 'redirect') return;
    expect(outcome.url.searchParams.get('error')).toBe('invalid_target');
    expect(outcome.url.searchParams.get('iss')).toBe(gateway.url);
    expect(outcome.url.searchParams.get('state')).toBe('state-42');
  });

  it('refuses a plain PKCE challenge', async () => {
    const client = await register();
    const outcome = await new TestBrowser().navigate(
      authorizationUrl(String(client.body.client_id), 'a'.repeat(43), { code_challenge_method: 'plain' }),
      REDIRECT,
    );
    expect(outcome.kind).toBe('redirect');
    if (outcome.kind === 'redirect') expect(outcome.url.searchParams.get('error')).toBe('invalid_request');
  });

  it('never redirects to an unregistered redirect URI', async () => {
    const client = await register();
    const { challenge } = pkce();
    const outcome = await new TestBrowser().navigate(
      authorizationUrl(String(client.body.client_id), challenge, { redirect_uri: 'http://127.0.0.1:9/elsewhere' }),
      'http://127.0.0.1:9/elsewhere',
    );
    expect(outcome.kind).toBe('page');
    if (outcome.kind === 'page') expect(outcome.body).toContain('redirect_uri');
  });

  it('refuses a replayed code and a wrong verifier with invalid_grant', async () => {
    people.next = 'alice';
    const client = await register();
    const clientId = String(client.body.client_id);
    const { verifier, challenge } = pkce();
    const browser = new TestBrowser();
    const { code } = await browser.authorize(authorizationUrl(clientId, challenge), REDIRECT);
    const wrong = await postForm('/oauth/token', { grant_type: 'authorization_code', code, code_verifier: pkce().verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
    expect(wrong.body.error).toBe('invalid_grant');
    const { code: second } = await browser.authorize(authorizationUrl(clientId, challenge), REDIRECT);
    const form = { grant_type: 'authorization_code', code: second, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId, resource };
    expect((await postForm('/oauth/token', form)).status).toBe(200);
    const replay = await postForm('/oauth/token', form);
    expect(replay.body.error).toBe('invalid_grant');
  });

  it('refuses a malformed registration with invalid_client_metadata or invalid_redirect_uri', async () => {
    const fragment = await register({ redirect_uris: ['https://app.example.com/cb#x'] });
    expect(fragment.status).toBe(400);
    expect(['invalid_redirect_uri', 'invalid_client_metadata']).toContain(fragment.body.error);
    const remoteHttp = await register({ redirect_uris: ['http://app.example.com/cb'] });
    expect(remoteHttp.status).toBe(400);
    const notJson = await fetch(`${gateway.url}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(notJson.status).toBe(400);
  });

  it('lets a native client redirect to any loopback port (RFC 8252 §7.3)', async () => {
    people.next = 'alice';
    const client = await register({ application_type: 'native', redirect_uris: ['http://127.0.0.1/callback'] });
    expect(client.status).toBe(201);
    const { challenge } = pkce();
    const redirect = 'http://127.0.0.1:51234/callback';
    const { code } = await new TestBrowser().authorize(authorizationUrl(String(client.body.client_id), challenge, { redirect_uri: redirect }), redirect);
    expect(code).not.toBe('');
  });

  it('ends with access_denied when the person denies, and the state comes back', async () => {
    people.next = 'carol';
    const client = await register();
    const browser = new TestBrowser();
    browser.answer = 'deny';
    const { challenge } = pkce();
    const outcome = await browser.navigate(authorizationUrl(String(client.body.client_id), challenge), REDIRECT);
    expect(outcome.kind).toBe('redirect');
    if (outcome.kind !== 'redirect') return;
    expect(outcome.url.searchParams.get('error')).toBe('access_denied');
    expect(outcome.url.searchParams.get('state')).toBe('state-42');
  });

  it.each([
    ['a document naming another client_id', '/wrong-id.json'],
    ['a redirected document', '/redirect.json'],
    ['a document over the size limit', '/huge.json'],
    ['a document that never arrives', '/slow.json'],
    ['a missing document', '/missing.json'],
  ])('refuses %s as client identity, and shows no consent page', async (_name, path) => {
    const { challenge } = pkce();
    const browser = new TestBrowser();
    const outcome = await browser.navigate(authorizationUrl(`${documentsUrl}${path}`, challenge), REDIRECT);
    expect(outcome.kind).toBe('page');
    if (outcome.kind === 'page') expect(outcome.body).toMatch(/invalid_client/);
    expect(browser.consentPages).toHaveLength(0);
  });

  // Last: it spends this address's registrations for the minute.
  it('limits registrations per client address (429 with Retry-After), storing nothing more', async () => {
    let answer = await register();
    for (let attempt = 0; attempt < 25 && answer.status === 201; attempt += 1) answer = await register();
    expect(answer.status).toBe(429);
    expect(answer.body).toEqual({ error: 'slow_down', error_description: 'too many registrations from this address' });
  });

  it('writes an audit line for every sign-in, consent and token, naming the person only by a digest', () => {
    const audits = gateway.logs.filter((line) => line.includes('authorization audit')).map((line) => JSON.parse(line) as Record<string, unknown>);
    const actions = new Set(audits.map((line) => line.action));
    for (const action of ['sign_in', 'consent', 'token', 'withdraw']) expect(actions).toContain(action);
    const token = audits.find((line) => line.action === 'token');
    expect(token?.grant_type).toBe('authorization_code');
    expect(String(token?.principal)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('never logs a token, code or subject', () => {
    const logs = gateway.logs.join('\n');
    expect(logs).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/);
    expect(logs).not.toContain('"alice"');
  });
});
