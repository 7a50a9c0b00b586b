import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterEach } from 'vitest';
import { createCalculatorServer } from '../../examples/calculator/server.js';
import { inspectJsonRpcBody } from '../../src/policy/jsonrpc.js';
import { decodeMcpHeaderValue, mirroredHeadersProblem } from '../../src/policy/mcp-headers.js';

/**
 * One deployment misconfiguration the fixture plants (or `clean`: none). Each is a mistake seen in the field
 * between protected resource metadata, authorization server metadata and the tokens an IdP really issues.
 */
export type Plant =
  | 'clean'
  /** The metadata's `resource` names another server. */
  | 'prm-resource-mismatch'
  /** The metadata's `resource` is the server's origin, a same-origin prefix of the MCP endpoint. */
  | 'prm-resource-prefix'
  /** The authorization server metadata's `issuer` is not the URL the resource advertises (a rewritten issuer). */
  | 'as-issuer-mismatch'
  /** `code_challenge_methods_supported` lacks S256. */
  | 'no-s256'
  /** `code_challenge_methods_supported` is absent. */
  | 'no-pkce-field'
  /** No `resource_metadata` in the challenge and the metadata only at the root (shape B). */
  | 'root-only-discovery'
  /** The 401 to a request without a token carries `error="invalid_token"`. */
  | 'error-without-token'
  /** The challenge's `resource_metadata` is a relative reference, not an absolute URL. */
  | 'relative-resource-metadata'
  /**
   * Before the authorization server redirects back, a forged response (another `state`, a code of its own) reaches
   * the redirect URI; its answer is recorded in `requests` as `forged response: <status>`.
   */
  | 'wrong-state'
  /** The authorization server refuses: `error=access_denied`. */
  | 'access-denied'
  /** Every `tools/list` with a token: 403 insufficient_scope for a scope never granted (`mcp:admin`). */
  | 'insufficient-scope'
  /** Every `tools/list` with a token: 403 insufficient_scope naming one more new scope each time. */
  | 'escalating-scope'
  /** Every POST with a token, `initialize` included: 403 insufficient_scope for `mcp:admin`. */
  | 'insufficient-scope-initialize'
  /** The token endpoint issues an access token with a line break in it (not RFC 6750 b64token syntax). */
  | 'line-break-token'
  /** Every MCP request with a valid token: 307 to `/moved/mcp` (which would answer 200). */
  | 'token-redirect'
  /** Every MCP request: 308 to `/moved/mcp`. */
  | 'moved-endpoint'
  /** The authorization response's `iss` is the issuer with a trailing slash (RFC 9207: a different issuer). */
  | 'iss-trailing-slash'
  /** The authorization response has no `iss`, although the metadata advertises it. */
  | 'iss-missing'
  /**
   * After the first MCP request answered with a token, the resource moves to a second authorization server at
   * `/as2`: the metadata names it, and tokens from `/as` are refused (401).
   */
  | 'as-migration'
  /** A refresh issues a new access token but no new refresh token (the old one stays valid). */
  | 'refresh-without-rotation'
  /**
   * A grant is missing: on 2025-11-25 `initialize` is answered with the JSON-RPC error -32042, on 2026-07-28
   * `tools/call` with an `input_required` result; both carry a URL elicitation of `CONSENT_URL`.
   */
  | 'url-elicitation'
  /** A grant is missing and the client did not declare URL elicitation: `tools/call` is a tool error naming `CONSENT_URL`. */
  | 'consent-tool-error'
  /** The first `server/discover` is answered 400 UnsupportedProtocolVersion although it names 2026-07-28 as supported. */
  | 'first-version-refused'
  /** `server/discover` is answered 400 UnsupportedProtocolVersion naming only 2025-11-25 (a server of both eras). */
  | 'only-2025-11-25';

export interface FixtureOptions {
  readonly plant?: Plant;
  /**
   * `jwt`: the token endpoint issues JWTs for the resource. `canary`: opaque tokens, codes and client secrets that
   * contain CANARY, to search output for.
   */
  readonly issue?: 'jwt' | 'canary';
  /**
   * The MCP endpoint's protocol: `legacy` (default) the SDK calculator on 2025-11-25, `modern` a 2026-07-28 server
   * (no initialize; every request's mirrored headers checked as the gateway checks them, its `Mcp-Param-*` against the
   * tool's `x-mcp-header` annotations). `requests` then also records `<method> headers ok`.
   */
  readonly wire?: 'legacy' | 'modern';
}

/** The link both URL elicitations carry. */
export const CONSENT_URL = 'https://consent.example.com/grant?request=r1';
const CONSENT_MESSAGE = 'Connect your example account';

/** The tools of the 2026-07-28 endpoint: one with a header-mirrored argument, one whose annotation is invalid. */
const MODERN_TOOLS = [
  { name: 'add', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } },
  { name: 'regional', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, query: { type: 'string' } } } },
  { name: 'broken', inputSchema: { type: 'object', properties: { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } } } },
];

export interface TokenClaims {
  readonly aud?: string;
  readonly iss?: string;
  /** Seconds from now; negative: already expired. */
  readonly expiresIn?: number;
  /** `stranger`: signed with a key that is not in the JWKS (a bad signature). */
  readonly signedBy?: 'server' | 'stranger';
}

export interface Fixture {
  /** The MCP endpoint. */
  readonly url: URL;
  /** The MCP endpoint's resource identifier (`url` without anything else). */
  readonly resource: string;
  /** The authorization server as the resource advertises it (an issuer with a path). */
  readonly issuer: string;
  /** Paths requested, in order (`GET /as/authorize`, …), to tell what a client did. */
  readonly requests: readonly string[];
  /** Every bearer token sent to the MCP endpoint, in order. */
  readonly presented: readonly string[];
  /** Refresh tokens the token endpoint still accepts (rotation drops a used one). */
  readonly liveRefreshTokens: ReadonlySet<string>;
  /** A JWT access token as the fixture's authorization server would issue it, with `claims` changed. */
  token(claims?: TokenClaims): Promise<string>;
  close(): Promise<void>;
}

export const CANARY = 'CANARY';

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  return (request.headers['content-type'] ?? '').includes('application/json') ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/**
 * A whole deployment on one loopback port, written to be wrong in one chosen way: an MCP server (the example
 * calculator, official SDK, stateless) behind a bearer check, its protected resource metadata, and an
 * authorization server at `/as` (metadata, JWKS, dynamic registration, an authorization endpoint that approves at
 * once, a token endpoint with PKCE S256). Tokens are JWTs checked with jose against the fixture's own key.
 */
export async function startClientFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const plant = options.plant ?? 'clean';
  const serverKey = await generateKeyPair('ES256');
  const strangerKey = await generateKeyPair('ES256');
  const jwk: JWK = { ...(await exportJWK(serverKey.publicKey)), kid: 'fixture', alg: 'ES256', use: 'sig' };
  const requests: string[] = [];
  const presented: string[] = [];
  /** code → PKCE challenge, scope and client, one use each. */
  const codes = new Map<string, { challenge: string; scope?: string; clientId?: string }>();
  /** refresh token → scope, the server that issued it and its client. */
  const refreshTokens = new Map<string, { scope?: string; issuer: string; clientId?: string }>();
  const opaqueTokens = new Set<string>();
  let refusals = 0;
  let migrated = false;
  let versionRefused = false;
  let origin = '';
  const currentIssuer = () => `${origin}${migrated ? '/as2' : '/as'}`;
  const urls = () => ({ resource: `${origin}/mcp`, issuer: currentIssuer() });

  const sign = (claims: TokenClaims = {}, scope?: string): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const key: CryptoKey = claims.signedBy === 'stranger' ? strangerKey.privateKey : serverKey.privateKey;
    return new SignJWT({ scope: scope ?? 'mcp:tools', client_id: 'fixture-client' })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'fixture' })
      .setIssuer(claims.iss ?? urls().issuer)
      .setAudience(claims.aud ?? urls().resource)
      .setSubject('fixture-user')
      .setIssuedAt(now)
      .setExpirationTime(now + (claims.expiresIn ?? 300))
      .sign(key);
  };

  const accepted = async (authorization: string | undefined): Promise<boolean> => {
    const token = authorization?.startsWith('Bearer ') === true ? authorization.slice('Bearer '.length) : undefined;
    if (token === undefined) return false;
    presented.push(token);
    if (opaqueTokens.has(token)) return true;
    try {
      await jwtVerify(token, serverKey.publicKey, { issuer: urls().issuer, audience: urls().resource, algorithms: ['ES256'] });
      return true;
    } catch {
      return false;
    }
  };

  const challenge = (): string => {
    const params = [
      ...(plant === 'error-without-token' ? ['error="invalid_token"'] : []),
      ...(plant === 'root-only-discovery' ? [] : [`resource_metadata="${plant === 'relative-resource-metadata' ? '' : origin}/.well-known/oauth-protected-resource/mcp"`]),
      'scope="mcp:tools"',
    ];
    return `Bearer ${params.join(', ')}`;
  };

  const protectedResourceMetadata = () => ({
    resource: plant === 'prm-resource-mismatch' ? `${origin}/other/mcp` : plant === 'prm-resource-prefix' ? origin : urls().resource,
    authorization_servers: [urls().issuer],
    scopes_supported: ['mcp:tools'],
    bearer_methods_supported: ['header'],
  });

  const authorizationServerMetadata = (issuer: string) => {
    const pkce = plant === 'no-s256' ? { code_challenge_methods_supported: ['plain'] } : plant === 'no-pkce-field' ? {} : { code_challenge_methods_supported: ['S256'] };
    return {
      issuer: plant === 'as-issuer-mismatch' ? 'https://idp.example.com/realms/mcp' : issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/register`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
      authorization_response_iss_parameter_supported: true,
      ...pkce,
    };
  };

  const secret = (kind: string) => (options.issue === 'canary' ? `${CANARY}-${kind}-${randomBytes(9).toString('base64url')}` : randomBytes(18).toString('base64url'));

  const handlers: Record<string, (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void> | void> = {
    'GET /.well-known/oauth-protected-resource/mcp': (_request, response) => {
      if (plant === 'root-only-discovery') json(response, 404, { error: 'not_found' });
      else json(response, 200, protectedResourceMetadata());
    },
    'GET /.well-known/oauth-protected-resource': (_request, response) => {
      if (plant === 'root-only-discovery') json(response, 200, protectedResourceMetadata());
      else json(response, 404, { error: 'not_found' });
    },
  };

  /** The handlers of the authorization server at `prefix` (`/as`, and `/as2` where the resource moves to). */
  const authorizationServerHandlers = (prefix: string): typeof handlers => {
    const issuer = () => `${origin}${prefix}`;
    /** A client id registered at another of the fixture's servers, presented here, is recorded. */
    const checkClient = (clientId: string | undefined) => {
      if (clientId?.startsWith('client-') === true && !clientId.startsWith(`client${prefix.replace('/', '-')}-`)) requests.push(`foreign client at ${prefix}`);
    };
    const issue = async (response: ServerResponse, scope: string | undefined, clientId: string | undefined, rotated?: string) => {
      const issued = options.issue === 'canary' ? secret('access-token') : await sign({ iss: issuer() }, scope);
      const accessToken = plant === 'line-break-token' ? `${issued}\n${CANARY}-second-line\n` : issued;
      if (options.issue === 'canary') opaqueTokens.add(accessToken);
      const refreshToken = rotated === undefined ? secret('refresh-token') : plant === 'refresh-without-rotation' ? undefined : secret('refresh-token');
      if (rotated !== undefined && refreshToken !== undefined) refreshTokens.delete(rotated);
      if (refreshToken !== undefined) refreshTokens.set(refreshToken, { scope, issuer: issuer(), clientId });
      json(response, 200, {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: 300,
        scope: scope ?? 'mcp:tools',
        ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
      });
    };
    return {
      [`GET /.well-known/oauth-authorization-server${prefix}`]: (_request, response) => json(response, 200, authorizationServerMetadata(issuer())),
      [`GET ${prefix}/jwks`]: (_request, response) => json(response, 200, { keys: [jwk] }),
      [`POST ${prefix}/register`]: async (request, response) => {
        const body = (await readJson(request)) as { redirect_uris?: string[]; client_name?: string };
        const clientSecret = options.issue === 'canary' ? secret('client-secret') : undefined;
        json(response, 201, {
          client_id: `client${prefix.replace('/', '-')}-${randomBytes(6).toString('hex')}`,
          ...(clientSecret === undefined ? { token_endpoint_auth_method: 'none' } : { client_secret: clientSecret, token_endpoint_auth_method: 'client_secret_post' }),
          redirect_uris: body.redirect_uris ?? [],
          client_name: body.client_name,
        });
      },
      [`GET ${prefix}/authorize`]: async (_request, response, url) => {
        const redirect = new URL(url.searchParams.get('redirect_uri') ?? '');
        const state = url.searchParams.get('state') ?? '';
        const clientId = url.searchParams.get('client_id') ?? undefined;
        checkClient(clientId);
        if (plant === 'wrong-state') {
          const forged = new URL(redirect);
          forged.search = new URLSearchParams({ code: secret('forged-code'), state: `${state}x` }).toString();
          const answer = await fetch(forged);
          await answer.body?.cancel();
          requests.push(`forged response: ${answer.status}`);
        }
        if (plant === 'access-denied') {
          redirect.searchParams.set('error', 'access_denied');
        } else {
          const code = secret('code');
          codes.set(code, { challenge: url.searchParams.get('code_challenge') ?? '', scope: url.searchParams.get('scope') ?? undefined, clientId });
          redirect.searchParams.set('code', code);
        }
        redirect.searchParams.set('state', state);
        if (plant !== 'iss-missing') redirect.searchParams.set('iss', plant === 'iss-trailing-slash' ? `${issuer()}/` : issuer());
        response.writeHead(302, { location: redirect.href }).end();
      },
      [`POST ${prefix}/token`]: async (request, response) => {
        const body = (await readJson(request)) as Record<string, string | undefined>;
        checkClient(body.client_id);
        if (body.resource !== protectedResourceMetadata().resource) {
          json(response, 400, { error: 'invalid_target' });
          return;
        }
        if (body.grant_type === 'refresh_token') {
          const refresh = refreshTokens.get(body.refresh_token ?? '');
          if (refresh === undefined || refresh.issuer !== issuer() || refresh.clientId !== body.client_id) {
            json(response, 400, { error: 'invalid_grant' });
            return;
          }
          await issue(response, refresh.scope, refresh.clientId, body.refresh_token);
          return;
        }
        const grant = codes.get(body.code ?? '');
        codes.delete(body.code ?? '');
        const verified = grant !== undefined && createHash('sha256').update(body.code_verifier ?? '').digest('base64url') === grant.challenge;
        if (!verified) {
          json(response, 400, { error: 'invalid_grant' });
          return;
        }
        await issue(response, grant.scope, grant.clientId);
      },
    };
  };
  Object.assign(handlers, authorizationServerHandlers('/as'), authorizationServerHandlers('/as2'));

  /** One 2026-07-28 request: the checks a modern server (and the gateway) makes, then its answer. */
  const modernAnswer = (request: IncomingMessage, response: ServerResponse, body: unknown) => {
    const message = body as { id?: number; method?: string; params?: { name?: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> } };
    const error = (status: number, code: number, text: string, data?: unknown) =>
      json(response, status, { jsonrpc: '2.0', id: message.id ?? null, error: { code, message: text, ...(data === undefined ? {} : { data }) } });
    if (message.method === 'initialize') {
      error(400, -32022, 'Unsupported protocol version', { supported: ['2026-07-28'], requested: 'initialize' });
      return;
    }
    const inspected = inspectJsonRpcBody(JSON.stringify(body), 'application/json');
    const problem = inspected.kind === 'message' ? mirroredHeadersProblem(request.headers, inspected.message) : 'not a message';
    if (problem !== undefined || request.headers['mcp-protocol-version'] !== '2026-07-28' || message.params?._meta?.['io.modelcontextprotocol/protocolVersion'] !== '2026-07-28') {
      error(400, -32020, `header mismatch: ${problem ?? 'protocol version'}`);
      return;
    }
    const tool = MODERN_TOOLS.find((candidate) => candidate.name === message.params?.name);
    if (message.method === 'tools/call' && tool?.name === 'regional') {
      const region = message.params?.arguments?.region;
      if (typeof region === 'string' && decodeMcpHeaderValue(String(request.headers['mcp-param-region'] ?? '')) !== region) {
        error(400, -32020, 'header mismatch: Mcp-Param-Region');
        return;
      }
    }
    requests.push(`${message.method ?? ''} headers ok`);
    const result = (fields: Record<string, unknown>) => json(response, 200, { jsonrpc: '2.0', id: message.id, result: { resultType: 'complete', ...fields } });
    switch (message.method) {
      case 'server/discover':
        result({ supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'modern fixture', version: '1' } }, ttlMs: 0, cacheScope: 'private' });
        return;
      case 'tools/list':
        result({ tools: MODERN_TOOLS, ttlMs: 0, cacheScope: 'private' });
        return;
      case 'tools/call':
        if (plant === 'url-elicitation') {
          const inputRequests = { e1: { method: 'elicitation/create', params: { mode: 'url', url: CONSENT_URL, message: CONSENT_MESSAGE } } };
          json(response, 200, { jsonrpc: '2.0', id: message.id, result: { resultType: 'input_required', inputRequests } });
          return;
        }
        if (tool === undefined) {
          error(400, -32602, 'unknown tool');
          return;
        }
        // An SSE answer, as servers may give: a progress notification, then the result.
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
        response.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { resultType: 'complete', content: [{ type: 'text', text: `${tool.name} ok` }] } })}\n\n`);
        return;
      default:
        error(404, -32601, 'Method not found');
    }
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', origin);
    requests.push(`${request.method ?? 'GET'} ${url.pathname}`);
    void (async () => {
      if (url.pathname === '/moved/mcp') {
        json(response, 200, { jsonrpc: '2.0', id: 1, result: {} });
        return;
      }
      if (url.pathname === '/mcp') {
        const moved = () => response.writeHead(plant === 'moved-endpoint' ? 308 : 307, { location: `${origin}/moved/mcp?from=fixture` }).end();
        if (plant === 'moved-endpoint') {
          moved();
          return;
        }
        if (!(await accepted(request.headers.authorization))) {
          json(response, 401, { error: 'unauthorized' }, { 'www-authenticate': challenge() });
          return;
        }
        if (plant === 'token-redirect') {
          moved();
          return;
        }
        const body = await readJson(request);
        const method = (body as { method?: string } | undefined)?.method;
        // This request is still served with the first server's token; every later one needs the second server's.
        if (plant === 'as-migration' && method === 'tools/list') migrated = true;
        if (plant === 'insufficient-scope-initialize' || ((plant === 'insufficient-scope' || plant === 'escalating-scope') && method === 'tools/list')) {
          refusals += 1;
          const scope = plant === 'escalating-scope' ? `mcp:level${refusals}` : 'mcp:admin';
          const header = `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`;
          json(response, 403, { error: 'insufficient_scope' }, { 'www-authenticate': header });
          return;
        }
        if (request.method !== 'POST') {
          json(response, 405, { error: 'method not allowed' }, { allow: 'POST' });
          return;
        }
        const id = (body as { id?: unknown }).id;
        if (method === 'server/discover' && (plant === 'only-2025-11-25' || (plant === 'first-version-refused' && !versionRefused))) {
          versionRefused = true;
          const supported = plant === 'only-2025-11-25' ? ['2025-11-25'] : ['2026-07-28'];
          json(response, 400, { jsonrpc: '2.0', id, error: { code: -32022, message: 'Unsupported protocol version', data: { supported, requested: '2026-07-28' } } });
          return;
        }
        if (options.wire === 'modern') {
          modernAnswer(request, response, body);
          return;
        }
        if (plant === 'consent-tool-error' && method === 'tools/call') {
          const content = [{ type: 'text', text: `${CONSENT_MESSAGE}: open ${CONSENT_URL} in a browser to connect your account, then try again.` }];
          json(response, 200, { jsonrpc: '2.0', id, result: { content, isError: true } });
          return;
        }
        if (plant === 'url-elicitation' && method === 'initialize') {
          const data = { elicitations: [{ mode: 'url', elicitationId: 'e1', url: CONSENT_URL, message: CONSENT_MESSAGE }] };
          json(response, 200, { jsonrpc: '2.0', id, error: { code: -32042, message: 'URL elicitation required', data } });
          return;
        }
        const mcp = createCalculatorServer();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        response.on('close', () => void transport.close().then(() => mcp.close()));
        await mcp.connect(transport);
        await transport.handleRequest(request, response, body);
        return;
      }
      const handler = handlers[`${request.method ?? 'GET'} ${url.pathname}`];
      if (handler === undefined) json(response, 404, { error: 'not_found' });
      else await handler(request, response, url);
    })().catch(() => {
      if (!response.headersSent) json(response, 500, { error: 'fixture failure' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: new URL(urls().resource),
    resource: urls().resource,
    issuer: urls().issuer,
    requests,
    presented,
    get liveRefreshTokens() {
      return new Set(refreshTokens.keys());
    },
    token: (claims) => sign(claims),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `fixture(plant)` for one test file: every fixture it starts is closed after its test (closing twice is fine). */
export function fixturePerTest(): (plant?: Plant, options?: Omit<FixtureOptions, 'plant'>) => Promise<Fixture> {
  const started: Fixture[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((fixture) => fixture.close()));
  });
  return async (plant = 'clean', options = {}) => {
    const fixture = await startClientFixture({ ...options, plant });
    started.push(fixture);
    return fixture;
  };
}
