import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startDevAuthServer } from '../../src/authserver/dev-auth-server.js';
import type { DevAuthServer, DevAuthServerOptions } from '../../src/authserver/types.js';
import { CookieJar } from '../../examples/demo/headless-authorization.js';

const CALC = 'https://gw.example.com/calc/mcp';
const NOTES = 'https://gw.example.com/notes/mcp';
const REDIRECT = 'http://127.0.0.1:9/callback';
const PUBLIC_CLIENT = 'calc-cli';
const INTROSPECTOR = { client_id: 'gateway', client_secret: 'introspection-secret-for-tests' };

const silent = pino({ level: 'silent' });

function baseOptions(overrides: Partial<DevAuthServerOptions> = {}): DevAuthServerOptions {
  return {
    resources: [
      { resource: CALC, scopes: ['mcp:tools', 'calc:write'], defaultScopes: ['mcp:tools'] },
      { resource: NOTES, scopes: ['mcp:tools', 'notes:read'], accessTokenFormat: 'opaque' },
    ],
    clients: [
      { client_id: PUBLIC_CLIENT, client_name: 'Calc CLI', redirect_uris: [REDIRECT] },
      { ...INTROSPECTOR, grant_types: [] },
    ],
    autoApprove: true,
    logger: silent,
    ...overrides,
  };
}

interface Pkce {
  readonly verifier: string;
  readonly challenge: string;
}

function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

type AuthorizationOutcome =
  | { readonly kind: 'redirect'; readonly url: URL }
  | { readonly kind: 'page'; readonly status: number; readonly url: URL; readonly body: string };

/** Follows the authorization server's own redirects (with its cookies) until it sends the browser elsewhere or shows a page. */
async function browse(server: DevAuthServer, start: URL, jar: CookieJar, init: RequestInit = {}): Promise<AuthorizationOutcome> {
  let url = start;
  let request = init;
  for (let hop = 0; hop < 12; hop += 1) {
    const response = await fetch(url, { ...request, redirect: 'manual', headers: { ...request.headers, cookie: jar.header() } });
    jar.store(response);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null) {
      return { kind: 'page', status: response.status, url, body: await response.text() };
    }
    await response.body?.cancel();
    const next = new URL(location, url);
    if (next.origin !== server.issuer) return { kind: 'redirect', url: next };
    url = next;
    request = {};
  }
  throw new Error('too many redirects');
}

function authorizationUrl(server: DevAuthServer, params: Record<string, string | undefined>): URL {
  const url = new URL('/auth', server.issuer);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value);
  return url;
}

interface CodeRequest {
  readonly clientId?: string;
  readonly redirectUri?: string;
  readonly resource?: string;
  /** `null`: no scope parameter at all. */
  readonly scope?: string | null;
  readonly pkce?: Pkce;
}

async function authorize(server: DevAuthServer, request: CodeRequest = {}, jar = new CookieJar()): Promise<AuthorizationOutcome> {
  const challenge = request.pkce ?? pkce();
  return browse(
    server,
    authorizationUrl(server, {
      response_type: 'code',
      client_id: request.clientId ?? PUBLIC_CLIENT,
      redirect_uri: request.redirectUri ?? REDIRECT,
      resource: request.resource ?? CALC,
      scope: request.scope === null ? undefined : (request.scope ?? 'mcp:tools calc:write'),
      state: 'state-123',
      code_challenge: challenge.challenge,
      code_challenge_method: 'S256',
    }),
    jar,
  );
}

/** Authorization response parameters: query, or fragment for the implicit-style response types. */
function responseParams(url: URL): URLSearchParams {
  return url.hash === '' ? url.searchParams : new URLSearchParams(url.hash.slice(1));
}

function redirectOf(outcome: AuthorizationOutcome): URL {
  if (outcome.kind !== 'redirect') throw new Error(`expected a redirect, got HTTP ${outcome.status}: ${outcome.body.slice(0, 300)}`);
  return outcome.url;
}

interface TokenResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function postForm(url: string, form: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<TokenResponse> {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(form)) if (value !== undefined) body.set(key, value);
  const response = await fetch(url, { method: 'POST', body, headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function exchangeCode(
  server: DevAuthServer,
  code: string,
  verifier: string,
  overrides: Record<string, string | undefined> = {},
): Promise<TokenResponse> {
  return postForm(`${server.issuer}/token`, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    client_id: PUBLIC_CLIENT,
    resource: CALC,
    ...overrides,
  });
}

/** Runs the whole headless flow and returns the token response. */
async function obtainTokens(server: DevAuthServer, request: CodeRequest = {}): Promise<TokenResponse> {
  const challenge = pkce();
  const redirect = redirectOf(await authorize(server, { ...request, pkce: challenge }));
  const code = redirect.searchParams.get('code');
  if (code === null) throw new Error(`no code: ${redirect.search}`);
  return exchangeCode(server, code, challenge.verifier, {
    client_id: request.clientId ?? PUBLIC_CLIENT,
    redirect_uri: request.redirectUri ?? REDIRECT,
    resource: request.resource ?? CALC,
  });
}

function basic(clientId: string, secret: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}` };
}

describe('dev authorization server', () => {
  let server: DevAuthServer;

  beforeAll(async () => {
    server = await startDevAuthServer(baseOptions());
  });
  afterAll(async () => {
    await server.close();
  });

  describe('metadata', () => {
    it.each(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'])(
      '%s advertises PKCE S256, resource-bound code flow, registration, introspection and metadata documents',
      async (path) => {
        const response = await fetch(new URL(path, server.issuer));
        expect(response.status).toBe(200);
        const metadata = (await response.json()) as Record<string, unknown>;
        expect(metadata).toMatchObject({
          issuer: server.issuer,
          authorization_endpoint: `${server.issuer}/auth`,
          token_endpoint: `${server.issuer}/token`,
          registration_endpoint: `${server.issuer}/reg`,
          introspection_endpoint: server.introspectionEndpoint,
          jwks_uri: server.jwksUri,
          code_challenge_methods_supported: ['S256'],
          client_id_metadata_document_supported: true,
          response_types_supported: ['code'],
        });
      },
    );

    it('serves the same document at both well-known paths', async () => {
      const [rfc8414, oidc] = await Promise.all(
        ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'].map(async (path) =>
          (await fetch(new URL(path, server.issuer))).json(),
        ),
      );
      expect(rfc8414).toEqual(oidc);
    });

    it('publishes only public signing keys', async () => {
      const jwks = (await (await fetch(server.jwksUri)).json()) as { keys: Record<string, unknown>[] };
      expect(jwks.keys).toHaveLength(1);
      expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(jwks.keys[0]).not.toHaveProperty('d');
    });
  });

  describe('authorization code flow', () => {
    it('issues an at+jwt access token bound to the requested resource, with state returned unchanged', async () => {
      const challenge = pkce();
      const redirect = redirectOf(await authorize(server, { pkce: challenge }));
      expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT);
      expect(redirect.searchParams.get('state')).toBe('state-123');
      expect(redirect.searchParams.get('iss')).toBe(server.issuer);
      const code = redirect.searchParams.get('code') ?? '';

      const tokens = await exchangeCode(server, code, challenge.verifier);
      expect(tokens.status).toBe(200);
      expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 300, scope: 'mcp:tools calc:write' });
      const accessToken = String(tokens.body.access_token);
      expect(decodeProtectedHeader(accessToken)).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
      const { payload } = await jwtVerify(accessToken, createRemoteJWKSet(new URL(server.jwksUri)), {
        issuer: server.issuer,
        audience: CALC,
        typ: 'at+jwt',
      });
      expect(payload).toMatchObject({ aud: CALC, sub: 'demo-user', client_id: PUBLIC_CLIENT, scope: 'mcp:tools calc:write' });
      expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(300);
    });

    it('never grants a scope the resource does not offer', async () => {
      const tokens = await obtainTokens(server, { scope: 'mcp:tools notes:read admin' });
      expect(tokens.body.scope).toBe('mcp:tools');
    });

    it('accepts the resource with an upper-case host and still sets aud to the configured URI', async () => {
      const tokens = await obtainTokens(server, { resource: 'https://GW.example.com/calc/mcp' });
      const { payload } = await jwtVerify(String(tokens.body.access_token), createRemoteJWKSet(new URL(server.jwksUri)));
      expect(payload.aud).toBe(CALC);
    });

    it('refuses a code replayed a second time', async () => {
      const challenge = pkce();
      const code = redirectOf(await authorize(server, { pkce: challenge })).searchParams.get('code') ?? '';
      expect((await exchangeCode(server, code, challenge.verifier)).status).toBe(200);
      const replay = await exchangeCode(server, code, challenge.verifier);
      expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });
  });

  describe('browser clients (CORS)', () => {
    async function tokenRequestFrom(origin: string): Promise<Response> {
      const challenge = pkce();
      const code = redirectOf(await authorize(server, { pkce: challenge })).searchParams.get('code') ?? '';
      const body = new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: challenge.verifier,
        client_id: PUBLIC_CLIENT,
        resource: CALC,
      });
      return fetch(`${server.issuer}/token`, { method: 'POST', body, headers: { origin } });
    }

    it('lets the origin of a registered redirect URI read token responses', async () => {
      const response = await tokenRequestFrom('http://127.0.0.1:9');
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:9');
      await response.body?.cancel();
    });

    it('refuses token requests from any other origin', async () => {
      const response = await tokenRequestFrom('https://evil.example');
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(await response.json()).not.toHaveProperty('access_token');
    });

    const PAGE = 'http://127.0.0.1:8';
    function preflight(path: string, method: string, requestHeaders: string): Promise<Response> {
      return fetch(new URL(path, server.issuer), {
        method: 'OPTIONS',
        headers: { origin: PAGE, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders },
      });
    }

    it.each([
      ['RFC 8414 metadata', '/.well-known/oauth-authorization-server', 'GET'],
      ['OpenID metadata', '/.well-known/openid-configuration', 'GET'],
      ['JWKS', '/jwks', 'GET'],
      ['registration', '/reg', 'POST'],
      ['token', '/token', 'POST'],
    ])('a page may call the %s endpoint: the preflight allows its method and headers', async (_name, path, method) => {
      const response = await preflight(path, method, 'content-type, mcp-protocol-version');
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toMatch(/^(\*|http:\/\/127\.0\.0\.1:8)$/);
      expect(response.headers.get('access-control-allow-methods')).toContain(method);
      expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it('a page can read a registration answer, and a refusal (RFC 7591 from the browser)', async () => {
      const register = (metadata: Record<string, unknown>) =>
        fetch(`${server.issuer}/reg`, {
          method: 'POST',
          headers: { origin: PAGE, 'content-type': 'application/json' },
          body: JSON.stringify(metadata),
        });
      const registered = await register({ client_name: 'page', redirect_uris: [`${PAGE}/callback`], token_endpoint_auth_method: 'none' });
      expect(registered.status).toBe(201);
      expect(registered.headers.get('access-control-allow-origin')).toBe('*');
      expect(await registered.json()).toHaveProperty('client_id');
      const refused = await register({ redirect_uris: ['javascript:alert(1)'] });
      expect(refused.status).toBe(400);
      expect(refused.headers.get('access-control-allow-origin')).toBe('*');
      expect(await refused.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    });

    it('the authorization endpoint stays a top-level navigation: no CORS', async () => {
      const response = await fetch(authorizationUrl(server, { client_id: PUBLIC_CLIENT }), { headers: { origin: PAGE }, redirect: 'manual' });
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      await response.body?.cancel();
    });
  });

  describe('refused authorization requests', () => {
    it.each([
      ['an unknown resource', { resource: 'https://gw.example.com/other/mcp' }, 'invalid_target'],
      ['a resource with a fragment', { resource: `${CALC}#x` }, 'invalid_target'],
      ['no resource', { resource: undefined }, 'invalid_target'],
      ['no PKCE', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
      ['PKCE method plain', { code_challenge_method: 'plain' }, 'invalid_request'],
      ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ])('%s → error redirect with state', async (_name, overrides, error) => {
      const challenge = pkce();
      const params = {
        response_type: 'code',
        client_id: PUBLIC_CLIENT,
        redirect_uri: REDIRECT,
        resource: CALC,
        scope: 'mcp:tools',
        state: 'state-err',
        code_challenge: challenge.challenge,
        code_challenge_method: 'S256',
        ...overrides,
      };
      const response = responseParams(redirectOf(await browse(server, authorizationUrl(server, params), new CookieJar())));
      expect(response.get('error')).toBe(error);
      expect(response.get('state')).toBe('state-err');
      expect(response.has('code')).toBe(false);
    });

    it.each([
      ['an unregistered redirect URI', { redirectUri: 'http://127.0.0.1:9/other' }],
      ['a redirect URI differing only by port', { redirectUri: 'http://127.0.0.1:10/callback' }],
      ['an unknown client', { clientId: 'nobody' }],
    ])('%s → error page, never a redirect', async (_name, request) => {
      const outcome = await authorize(server, request);
      expect(outcome.kind).toBe('page');
      expect(outcome.kind === 'page' && outcome.status).toBe(400);
    });
  });

  describe('refused token requests', () => {
    async function freshCode(): Promise<{ code: string; verifier: string }> {
      const challenge = pkce();
      const code = redirectOf(await authorize(server, { pkce: challenge })).searchParams.get('code') ?? '';
      return { code, verifier: challenge.verifier };
    }

    it.each([
      ['no resource', 'invalid_target', { resource: undefined }],
      ['another configured resource', 'invalid_target', { resource: NOTES }],
      ['an unknown resource', 'invalid_target', { resource: 'https://gw.example.com/other/mcp' }],
      ['a wrong code_verifier', 'invalid_grant', { code_verifier: randomBytes(32).toString('base64url') }],
      ['no code_verifier', 'invalid_grant', { code_verifier: undefined }],
      ['no redirect_uri', 'invalid_request', { redirect_uri: undefined }],
    ])('%s → %s', async (_name, error, overrides) => {
      const { code, verifier } = await freshCode();
      const response = await exchangeCode(server, code, verifier, overrides);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe(error);
      expect(response.body).not.toHaveProperty('access_token');
    });
  });
});

interface ServedDocument {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body: string;
}

/** A client's own web server hosting Client ID Metadata Documents on loopback; counts requests per path. */
interface DocumentHost {
  readonly origin: string;
  readonly hits: Map<string, number>;
  serve(path: string, document: ServedDocument): string;
  close(): Promise<void>;
}

async function startDocumentHost(): Promise<DocumentHost> {
  const documents = new Map<string, ServedDocument>();
  const hits = new Map<string, number>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const document = documents.get(path);
    res.writeHead(document?.status ?? (document ? 200 : 404), { 'content-type': 'application/json', ...document?.headers });
    res.end(document?.body ?? '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    hits,
    serve: (path, document) => {
      documents.set(path, document);
      return `${origin}${path}`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function clientDocument(clientId: string, overrides: Record<string, unknown> = {}): ServedDocument {
  return {
    headers: { 'cache-control': 'no-store' },
    body: JSON.stringify({
      client_id: clientId,
      client_name: 'Metadata Document Client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...overrides,
    }),
  };
}

async function register(server: DevAuthServer, metadata: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Registered Client', response_types: ['code'], token_endpoint_auth_method: 'none', ...metadata }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('dev authorization server: client identity', () => {
  let server: DevAuthServer;
  let strictServer: DevAuthServer;
  let host: DocumentHost;

  beforeAll(async () => {
    [server, strictServer, host] = await Promise.all([
      startDevAuthServer(baseOptions({ allowLoopbackClientMetadata: true })),
      startDevAuthServer(baseOptions()),
      startDocumentHost(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server.close(), strictServer.close(), host.close()]);
  });

  describe('dynamic client registration', () => {
    it('registers a client whose client_uri is empty (a client library default)', async () => {
      const registered = await register(server, { redirect_uris: [REDIRECT], client_uri: '', grant_types: ['authorization_code'] });
      expect(registered.status).toBe(201);
      expect(registered.body).not.toHaveProperty('client_uri');
    });

    it('issues no refresh token to a registered client that names no grant types', async () => {
      const registered = await register(server, { redirect_uris: [REDIRECT] });
      expect(registered.body.grant_types).toEqual(['authorization_code']);
      const tokens = await obtainTokens(server, { clientId: String(registered.body.client_id) });
      expect(tokens.status).toBe(200);
      expect(tokens.body).not.toHaveProperty('refresh_token');
    });

    it("gives an authorization request without scope the route's scopes_supported", async () => {
      const registered = await register(server, { redirect_uris: [REDIRECT] });
      const tokens = await obtainTokens(server, { clientId: String(registered.body.client_id), scope: null });
      expect(tokens.status).toBe(200);
      expect(tokens.body.scope).toBe('mcp:tools');
    });

    it('registers a public client that then completes the flow', async () => {
      const registered = await register(server, { redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'] });
      expect(registered.status).toBe(201);
      expect(registered.body).not.toHaveProperty('client_secret');
      const clientId = String(registered.body.client_id);
      const tokens = await obtainTokens(server, { clientId });
      expect(tokens.status).toBe(200);
      const { payload } = await jwtVerify(String(tokens.body.access_token), createRemoteJWKSet(new URL(server.jwksUri)));
      expect(payload).toMatchObject({ aud: CALC, client_id: clientId });
    });

    it.each(['https://app.example.com/cb', 'http://localhost:7777/cb', 'http://127.0.0.1/cb', 'http://[::1]:7/cb'])(
      'accepts the redirect URI %s',
      async (uri) => {
        expect((await register(server, { redirect_uris: [uri] })).status).toBe(201);
      },
    );

    it.each([
      'http://app.example.com/cb',
      'http://192.168.1.10/cb',
      'https://app.example.com/cb#fragment',
      'http://user@127.0.0.1/cb',
      'javascript:alert(1)',
      'not a uri',
    ])('refuses the redirect URI %s with invalid_redirect_uri', async (uri) => {
      const registered = await register(server, { redirect_uris: ['https://app.example.com/ok', uri] });
      expect(registered.status).toBe(400);
      expect(registered.body.error).toBe('invalid_redirect_uri');
    });

    it('matches a native client loopback redirect URI exactly, port included', async () => {
      const registered = await register(server, { application_type: 'native', redirect_uris: [REDIRECT] });
      expect(registered.status).toBe(201);
      const outcome = await authorize(server, { clientId: String(registered.body.client_id), redirectUri: 'http://127.0.0.1:10/callback' });
      expect(outcome.kind).toBe('page');
    });
  });

  describe('client ID metadata documents (loopback, development mode)', () => {
    it('authorizes a client identified by its metadata document URL', async () => {
      const clientId = host.serve('/clients/good.json', clientDocument(`${host.origin}/clients/good.json`));
      const tokens = await obtainTokens(server, { clientId });
      expect(tokens.status).toBe(200);
      const { payload } = await jwtVerify(String(tokens.body.access_token), createRemoteJWKSet(new URL(server.jwksUri)));
      expect(payload).toMatchObject({ aud: CALC, client_id: clientId });
    });

    it.each([
      ['client_id differs from the URL', '/clients/mismatch.json', { client_id: 'http://127.0.0.1:1/clients/mismatch.json' }],
      ['no client_name', '/clients/nameless.json', { client_name: undefined }],
      ['redirect_uris without the requested one', '/clients/other-redirect.json', { redirect_uris: ['http://127.0.0.1:9/elsewhere'] }],
      ['a non-loopback http redirect URI', '/clients/http-redirect.json', { redirect_uris: [REDIRECT, 'http://app.example.com/cb'] }],
      ['a client secret', '/clients/secret.json', { client_secret: 'published-secret' }],
      ['a shared-secret auth method', '/clients/basic.json', { token_endpoint_auth_method: 'client_secret_basic' }],
    ])('refuses a document with %s (error page, no redirect)', async (_name, path, overrides) => {
      const clientId = host.serve(path, clientDocument(`${host.origin}${path}`, overrides));
      const outcome = await authorize(server, { clientId });
      expect(outcome.kind).toBe('page');
      expect(outcome.kind === 'page' && outcome.status).toBe(400);
      expect(host.hits.get(path)).toBeGreaterThan(0);
    });

    it.each([
      ['not JSON', '/clients/not-json.json', { body: '<html>client</html>' }],
      ['a JSON array', '/clients/array.json', { body: '[]' }],
      ['HTTP 404', '/clients/missing.json', { status: 404, body: '{}' }],
      ['larger than 64 KiB', '/clients/huge.json', { body: `{"pad":"${'x'.repeat(70 * 1024)}"}` }],
    ])('refuses a document that is %s', async (_name, path, document) => {
      const clientId = host.serve(path, document);
      const outcome = await authorize(server, { clientId });
      expect(outcome.kind === 'page' && outcome.status).toBe(400);
    });

    it('does not follow a redirect from the document URL', async () => {
      const target = host.serve('/clients/target.json', clientDocument(`${host.origin}/clients/redirecting.json`));
      const clientId = host.serve('/clients/redirecting.json', { status: 302, headers: { location: target }, body: '' });
      const outcome = await authorize(server, { clientId });
      expect(outcome.kind === 'page' && outcome.status).toBe(400);
      expect(host.hits.get('/clients/target.json')).toBeUndefined();
    });

    it('reuses a document for its Cache-Control max-age', async () => {
      const path = '/clients/cached.json';
      const clientId = host.serve(path, { ...clientDocument(`${host.origin}${path}`), headers: { 'cache-control': 'max-age=600' } });
      expect((await obtainTokens(server, { clientId })).status).toBe(200);
      expect((await obtainTokens(server, { clientId })).status).toBe(200);
      expect(host.hits.get(path)).toBeGreaterThan(0);
    });

    it('fetches a no-store document again for every use', async () => {
      const path = '/clients/uncached.json';
      const clientId = host.serve(path, clientDocument(`${host.origin}${path}`));
      redirectOf(await authorize(server, { clientId }));
      const before = host.hits.get(path) ?? 0;
      redirectOf(await authorize(server, { clientId }));
      expect(host.hits.get(path)).toBeGreaterThan(before);
    });

    it('never fetches a loopback http document outside development mode', async () => {
      const path = '/clients/strict.json';
      const clientId = host.serve(path, clientDocument(`${host.origin}${path}`));
      const outcome = await authorize(strictServer, { clientId });
      expect(outcome.kind === 'page' && outcome.status).toBe(400);
      expect(host.hits.get(path)).toBeUndefined();
    });
  });
});

describe('dev authorization server: introspection and refresh', () => {
  let server: DevAuthServer;

  beforeAll(async () => {
    server = await startDevAuthServer(
      baseOptions({
        clients: [
          { client_id: PUBLIC_CLIENT, client_name: 'Calc CLI', redirect_uris: [REDIRECT] },
          { ...INTROSPECTOR, grant_types: [] },
          { client_id: 'gateway-post', client_secret: 'post-secret-for-tests', grant_types: [], token_endpoint_auth_method: 'client_secret_post' },
        ],
      }),
    );
  });
  afterAll(async () => {
    await server.close();
  });

  async function introspect(token: string, auth: { headers?: Record<string, string>; form?: Record<string, string> }): Promise<TokenResponse> {
    return postForm(server.introspectionEndpoint, { token, ...auth.form }, auth.headers);
  }

  it('answers active with aud and scope for an opaque token, to a confidential client (basic auth)', async () => {
    const tokens = await obtainTokens(server, { resource: NOTES, scope: 'mcp:tools notes:read' });
    const token = String(tokens.body.access_token);
    expect(() => decodeProtectedHeader(token)).toThrow();
    const answer = await introspect(token, { headers: basic(INTROSPECTOR.client_id, INTROSPECTOR.client_secret) });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      active: true,
      aud: NOTES,
      scope: 'mcp:tools notes:read',
      client_id: PUBLIC_CLIENT,
      sub: 'demo-user',
      iss: server.issuer,
    });
    expect(typeof answer.body.exp).toBe('number');
  });

  it('accepts client_secret_post from a client registered for it', async () => {
    const tokens = await obtainTokens(server, { resource: NOTES, scope: 'mcp:tools' });
    const answer = await introspect(String(tokens.body.access_token), {
      form: { client_id: 'gateway-post', client_secret: 'post-secret-for-tests' },
    });
    expect(answer.body).toMatchObject({ active: true, aud: NOTES });
  });

  it.each([
    ['a wrong secret', 401, 'invalid_client', { headers: basic(INTROSPECTOR.client_id, 'wrong') }],
    ['no client authentication', 400, 'invalid_request', { form: {} }],
  ])('refuses introspection with %s → %i %s', async (_name, status, error, auth) => {
    const tokens = await obtainTokens(server, { resource: NOTES, scope: 'mcp:tools' });
    const answer = await introspect(String(tokens.body.access_token), auth);
    expect(answer.status).toBe(status);
    expect(answer.body.error).toBe(error);
    expect(answer.body).not.toHaveProperty('active');
  });

  it('tells a public client nothing, even about its own token', async () => {
    const tokens = await obtainTokens(server, { resource: NOTES, scope: 'mcp:tools' });
    const answer = await introspect(String(tokens.body.access_token), { form: { client_id: PUBLIC_CLIENT } });
    expect(answer.body).toEqual({ active: false });
  });

  it('cannot introspect a JWT access token (oidc-provider limit: introspection routes need opaque resources)', async () => {
    const tokens = await obtainTokens(server);
    const answer = await introspect(String(tokens.body.access_token), { headers: basic(INTROSPECTOR.client_id, INTROSPECTOR.client_secret) });
    expect(answer).toMatchObject({ status: 400, body: { error: 'unsupported_token_type' } });
  });

  it('answers inactive for an unknown token', async () => {
    const answer = await introspect('not-a-token', { headers: basic(INTROSPECTOR.client_id, INTROSPECTOR.client_secret) });
    expect(answer).toEqual({ status: 200, body: { active: false } });
  });

  it('rotates the refresh token of a public client and refuses the used one', async () => {
    const tokens = await obtainTokens(server);
    const first = String(tokens.body.refresh_token);
    expect(first.length).toBeGreaterThan(20);
    const refresh = (refreshToken: string, resource: string | undefined = CALC): Promise<TokenResponse> =>
      postForm(`${server.issuer}/token`, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: PUBLIC_CLIENT, resource });

    const rotated = await refresh(first);
    expect(rotated.status).toBe(200);
    const second = String(rotated.body.refresh_token);
    expect(second).not.toBe(first);
    const { payload } = await jwtVerify(String(rotated.body.access_token), createRemoteJWKSet(new URL(server.jwksUri)));
    expect(payload).toMatchObject({ aud: CALC, scope: 'mcp:tools calc:write' });

    expect(await refresh(first)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // Reusing a rotated token revokes the whole grant (oidc-provider's reuse detection).
    expect(await refresh(second)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('refuses a refresh without the resource parameter', async () => {
    const tokens = await obtainTokens(server);
    const answer = await postForm(`${server.issuer}/token`, {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.body.refresh_token),
      client_id: PUBLIC_CLIENT,
    });
    expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_target' } });
  });

  it('issues no refresh token when refresh tokens are off', async () => {
    const noRefresh = await startDevAuthServer(baseOptions({ issueRefreshTokens: false }));
    try {
      const tokens = await obtainTokens(noRefresh);
      expect(tokens.status).toBe(200);
      expect(tokens.body).not.toHaveProperty('refresh_token');
    } finally {
      await noRefresh.close();
    }
  });
});

describe('dev authorization server: consent page', () => {
  let server: DevAuthServer;
  const evilName = '<script>alert(1)</script> & "Co"';

  beforeAll(async () => {
    server = await startDevAuthServer(baseOptions({ autoApprove: false }));
  });
  afterAll(async () => {
    await server.close();
  });

  /** Authorization request up to the consent page, signing in with the page's single button. */
  async function reachConsent(clientId: string, jar: CookieJar): Promise<Extract<AuthorizationOutcome, { kind: 'page' }>> {
    const login = await authorize(server, { clientId }, jar);
    if (login.kind !== 'page') throw new Error('expected the login page');
    expect(login.status).toBe(200);
    expect(login.body).toContain('Sign in as demo-user');
    const consent = await browse(server, new URL(`${login.url.pathname}/login`, server.issuer), jar, { method: 'POST' });
    if (consent.kind !== 'page') throw new Error('expected the consent page');
    return consent;
  }

  it('shows the escaped client name and the redirect URI host, then issues a code on approval', async () => {
    const clientId = String((await register(server, { client_name: evilName, redirect_uris: [REDIRECT] })).body.client_id);
    const jar = new CookieJar();
    const consent = await reachConsent(clientId, jar);
    expect(consent.status).toBe(200);
    expect(consent.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;');
    expect(consent.body).not.toContain('<script>');
    expect(consent.body).toContain('<strong>127.0.0.1:9</strong>');
    expect(consent.body).toContain('Any local program can claim such an address');
    expect(consent.body).toContain('calc:write');

    const approved = redirectOf(await browse(server, new URL(`${consent.url.pathname}/confirm`, server.issuer), jar, { method: 'POST' }));
    expect(approved.searchParams.get('state')).toBe('state-123');
    expect(approved.searchParams.has('code')).toBe(true);
  });

  it('sends access_denied with the state when the user denies', async () => {
    const jar = new CookieJar();
    const consent = await reachConsent(PUBLIC_CLIENT, jar);
    const denied = redirectOf(await browse(server, new URL(`${consent.url.pathname}/abort`, server.issuer), jar, { method: 'POST' }));
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('state-123');
    expect(denied.searchParams.has('code')).toBe(false);
  });

  it('asks again on a later request by the same client in the same browser', async () => {
    const jar = new CookieJar();
    const consent = await reachConsent(PUBLIC_CLIENT, jar);
    redirectOf(await browse(server, new URL(`${consent.url.pathname}/confirm`, server.issuer), jar, { method: 'POST' }));
    const again = await authorize(server, {}, jar);
    expect(again.kind === 'page' && again.body).toContain('Approve');
  });

  it('refuses a form posted from another origin', async () => {
    const jar = new CookieJar();
    const consent = await reachConsent(PUBLIC_CLIENT, jar);
    const forged = await browse(server, new URL(`${consent.url.pathname}/confirm`, server.issuer), jar, {
      method: 'POST',
      headers: { origin: 'https://evil.example' },
    });
    expect(forged.kind === 'page' && forged.status).toBe(403);
  });

  it('serves pages that cannot be framed', async () => {
    const response = await fetch(authorizationUrl(server, { client_id: 'nobody' }));
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    await response.body?.cancel();
  });
});

describe('dev authorization server: start-up checks', () => {
  it.each([
    ['an http issuer on a public host', { issuer: 'http://auth.example.com' }],
    ['an issuer with a path', { issuer: 'http://127.0.0.1:9000/realms/dev' }],
    ['a resource configured twice', { resources: [{ resource: CALC, scopes: [] }, { resource: CALC, scopes: [] }] }],
    ['a resource with a fragment', { resources: [{ resource: `${CALC}#x`, scopes: [] }] }],
    ['a scope with a quote', { resources: [{ resource: CALC, scopes: ['a"b'] }] }],
  ])('refuses %s', async (_name, overrides) => {
    await expect(startDevAuthServer(baseOptions(overrides))).rejects.toThrow(TypeError);
  });

  it('accepts an https issuer (TLS terminated in front) and uses it in metadata', async () => {
    const server = await startDevAuthServer(baseOptions({ issuer: 'https://auth.example.com' }));
    try {
      const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(metadata.issuer).toBe('https://auth.example.com');
      expect(server.jwksUri).toBe('https://auth.example.com/jwks');
    } finally {
      await server.close();
    }
  });
});

describe('dev authorization server: signing key across restarts', () => {
  it('a restarted server (same key file) still validates a token issued before the restart; a fresh key does not', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'dev-as-keys-'));
    onTestFinished(() => rm(directory, { recursive: true, force: true }));
    const file = join(directory, 'keys', 'signing-keys.json');
    const first = await startDevAuthServer(baseOptions({ signingKeysFile: file }));
    const { issuer } = first;
    const token = String((await obtainTokens(first)).body.access_token);
    await first.close();
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const restarted = await startDevAuthServer(baseOptions({ signingKeysFile: file, port: Number(new URL(issuer).port) }));
    try {
      expect(restarted.issuer).toBe(issuer);
      const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(restarted.jwksUri)), { issuer, audience: CALC });
      expect(payload.scope).toBe('mcp:tools calc:write');
    } finally {
      await restarted.close();
    }

    const ephemeral = await startDevAuthServer(baseOptions());
    try {
      await expect(jwtVerify(token, createRemoteJWKSet(new URL(ephemeral.jwksUri)))).rejects.toThrow(/no applicable key/i);
    } finally {
      await ephemeral.close();
    }
  });
});

describe('dev authorization server: registrations across restarts', () => {
  it('a restarted server (same clients file) still knows a client registered before the restart', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'dev-as-clients-'));
    onTestFinished(() => rm(directory, { recursive: true, force: true }));
    const file = join(directory, 'state', 'clients.json');
    const first = await startDevAuthServer(baseOptions({ clientsFile: file }));
    const registered = await register(first, { redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'] });
    const clientId = String(registered.body.client_id);
    await first.close();
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const restarted = await startDevAuthServer(baseOptions({ clientsFile: file }));
    try {
      const tokens = await obtainTokens(restarted, { clientId });
      expect(tokens.status).toBe(200);
    } finally {
      await restarted.close();
    }
    const forgetful = await startDevAuthServer(baseOptions());
    try {
      const outcome = await authorize(forgetful, { clientId });
      expect(outcome.kind).toBe('page');
    } finally {
      await forgetful.close();
    }
  });
});
