import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { exportJWK, generateKeyPair } from 'jose';
import { pino } from 'pino';
import { startDevAuthServer } from '../../src/authserver/dev-auth-server.js';
import type { DevAuthServer } from '../../src/authserver/types.js';
import type { CacheStore } from '../../src/cache/store.js';
import { assembleGateway } from '../../src/gateway/assemble.js';
import { createCacheStore } from '../../src/gateway/cache-store.js';
import type { Gateway } from '../../src/gateway/build.js';
import { captureLogs } from './capture-logs.js';
import { compileOrThrow } from './gateway.js';
import { freePort } from './net.js';
import { eventually } from './poll.js';

export const IDP_CLIENT = { id: 'mcp-gateway', secret: 'idp-secret-for-the-gateway-tests' };

/** A JWK Set with one ES256 private key, as `authorization_server.signing_keys` holds it. */
export async function signingKeySet(): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: randomBytes(8).toString('hex'), alg: 'ES256', use: 'sig' }] });
}

/**
 * An organisation's IdP as the enterprise kind is configured: OpenID Connect only, no dynamic registration for
 * the MCP clients, no resource indicators (the development server answering only sign-ins), one pre-registered
 * client (the gateway). On `localhost`, the gateway on `127.0.0.1`: two hosts, so their cookies stay apart as in a
 * browser. `people` names who signs in next and their `groups` claim.
 */
export async function startEnterpriseIdp(gatewayUrl: string, people: { next: string; groups: Record<string, string[]> }): Promise<DevAuthServer> {
  const port = await freePort();
  return startDevAuthServer({
    host: '127.0.0.1',
    port,
    issuer: `http://localhost:${port}`,
    resources: [],
    clients: [
      {
        client_id: IDP_CLIENT.id,
        client_secret: IDP_CLIENT.secret,
        redirect_uris: [`${gatewayUrl}/consent/login/callback`],
        grant_types: ['authorization_code'],
      },
    ],
    autoApprove: true,
    signInAs: () => people.next,
    accountClaims: (id) => ({ groups: people.groups[id] ?? [], email: `${id}@example.com` }),
    logger: pino({ level: 'silent' }),
  });
}

export interface GatewayAsOptions {
  readonly idpIssuer: string;
  readonly upstream: string;
  readonly port: number;
  /** Port of the public URL (the issuer), when this replica listens elsewhere. Default: `port`. */
  readonly publicPort?: number;
  readonly extra?: string;
  /** `sign_in.auth_method`; default: the key left out (client_secret_basic). */
  readonly signInAuthMethod?: 'client_secret_basic' | 'client_secret_post';
}

/** A gateway that is the authorization server of its `calc` route, signing people in at `idpIssuer`. */
export function gatewayAsYaml(options: GatewayAsOptions): string {
  return `
listen: { host: 127.0.0.1, port: ${options.port} }
public_url: http://127.0.0.1:${options.publicPort ?? options.port}
admin: { enabled: false }
log: { level: info }
${options.extra ?? ''}
authorization_server:
  signing_keys: \${env:AS_KEYS}
  sign_in:
    issuer: ${options.idpIssuer}
    client_id: ${IDP_CLIENT.id}
    client_secret: \${env:IDP_SECRET}
    scopes: [openid, email]${options.signInAuthMethod === undefined ? '' : `\n    auth_method: ${options.signInAuthMethod}`}
  entitlements:
    - scopes: [mcp:tools]
    - scopes: [calc:write]
      when: { claim: groups, includes: calc-admins }
  clients:
    - client_id: pre-registered-cli
      client_name: Pre-registered CLI
      redirect_uris: [http://127.0.0.1:9/callback]
routes:
  - name: calc
    path: /calc/mcp
    resource_name: Calculator
    upstream: { url: "${options.upstream}" }
    scopes_supported: [mcp:tools, calc:write]
    policy:
      scopes: [mcp:tools]
      tools: { multiply: [calc:write] }
`;
}

export interface RunningGatewayAs {
  readonly url: string;
  readonly gateway: Gateway;
  readonly logs: string[];
  close(): Promise<void>;
}

/** Builds the real gateway from YAML (its store connected first) and listens on `listen.port`. */
export async function startGatewayAs(yaml: string, env: NodeJS.ProcessEnv): Promise<RunningGatewayAs> {
  const config = compileOrThrow(yaml, env);
  const { logger, lines: logs } = captureLogs();
  const cache: CacheStore = createCacheStore(config.cache, logger);
  await eventually('the store connected', () => Promise.resolve(cache.status().state === 'ready' ? true : undefined));
  const gateway = assembleGateway(config, { logger, cache });
  await gateway.app.listen({ host: config.listen.host, port: config.listen.port });
  const port = (gateway.app.server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, gateway, logs, close: () => gateway.close() };
}

/** A spare loopback port, for a public URL known before the gateway listens. */
export function sparePort(): Promise<number> {
  return freePort();
}

/** A browser's cookies: per host, whatever the port (as browsers keep them). */
class CookieJars {
  readonly #jars = new Map<string, Map<string, string>>();

  #jar(url: URL): Map<string, string> {
    let jar = this.#jars.get(url.hostname);
    if (!jar) {
      jar = new Map();
      this.#jars.set(url.hostname, jar);
    }
    return jar;
  }

  store(url: URL, response: Response): void {
    const jar = this.#jar(url);
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';', 1)[0] ?? '';
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const value = pair.slice(eq + 1);
      if (value === '' || /max-age=0|expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(pair.slice(0, eq).trim());
      else jar.set(pair.slice(0, eq).trim(), value);
    }
  }

  header(url: URL): string {
    return [...this.#jar(url)].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** What the person at the browser does on the gateway's consent page. */
export type ConsentAnswer = 'allow' | 'deny';

export type AuthorizationOutcome =
  | { readonly kind: 'redirect'; readonly url: URL }
  | { readonly kind: 'page'; readonly status: number; readonly url: URL; readonly body: string };

/**
 * A person at a browser: follows redirects across the gateway and the IdP (cookies per host), answers the consent
 * page with `answer`, and stops at the client's redirect URI (nothing listens there) or at any other page.
 */
export class TestBrowser {
  readonly jars = new CookieJars();
  answer: ConsentAnswer = 'allow';
  /** Consent pages seen, newest last. */
  readonly consentPages: string[] = [];

  async navigate(start: URL, redirectUri: string): Promise<AuthorizationOutcome> {
    let url = start;
    let init: RequestInit = {};
    for (let hop = 0; hop < 20; hop += 1) {
      const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: this.jars.header(url) } });
      this.jars.store(url, response);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel();
        const next = new URL(location, url);
        if (next.href.startsWith(redirectUri)) return { kind: 'redirect', url: next };
        url = next;
        init = {};
        continue;
      }
      const body = await response.text();
      const action = /action="([^"]+\/(?:confirm|abort))"/g;
      const forms = [...body.matchAll(action)].map((match) => match[1] ?? '');
      const target = forms.find((form) => form.endsWith(this.answer === 'allow' ? '/confirm' : '/abort'));
      if (response.status !== 200 || target === undefined) return { kind: 'page', status: response.status, url, body };
      this.consentPages.push(body);
      url = new URL(target.replaceAll('&amp;', '&'), url);
      init = { method: 'POST', headers: { origin: url.origin, 'content-type': 'application/x-www-form-urlencoded' }, body: '' };
    }
    throw new Error('too many redirects');
  }

  /** The code of an authorization that must succeed. */
  async authorize(start: URL, redirectUri: string): Promise<{ code: string; params: URLSearchParams }> {
    const outcome = await this.navigate(start, redirectUri);
    if (outcome.kind !== 'redirect') throw new Error(`expected a redirect, got HTTP ${outcome.status} at ${outcome.url.pathname}: ${outcome.body.slice(0, 300)}`);
    const code = outcome.url.searchParams.get('code');
    if (code === null) throw new Error(`authorization refused: ${outcome.url.searchParams.get('error') ?? 'no code'}`);
    return { code, params: outcome.url.searchParams };
  }
}

/** Whoever plays the person at the browser for an SDK client: walks an authorization request to its code. */
export interface PersonAtBrowser {
  authorize(start: URL, redirectUri: string): Promise<{ readonly code: string }>;
}

/**
 * The official SDK client's OAuth side for a test: registers dynamically (or uses a Client ID Metadata Document),
 * and lets `browser` (a TestBrowser, or Chromium at a real IdP) play the person. The code lands in `code` for the
 * transport's `finishAuth`.
 */
export class TestOAuthClient implements OAuthClientProvider {
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier: string | undefined;
  code: string | undefined;

  constructor(
    readonly browser: PersonAtBrowser,
    readonly options: { readonly redirectUrl: string; readonly clientMetadataUrl?: string; readonly grantTypes?: string[] },
  ) {}

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test client',
      redirect_uris: [this.options.redirectUrl],
      grant_types: this.options.grantTypes ?? ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client ?? (this.options.clientMetadataUrl === undefined ? undefined : { client_id: this.options.clientMetadataUrl });
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.#client = client;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error('no code verifier');
    return this.#verifier;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.code = (await this.browser.authorize(url, this.options.redirectUrl)).code;
  }
}

/**
 * Opens an MCP session on `resource` with `accessToken` as is (no refresh, no step-up) and calls the tool `name`:
 * the HTTP status of the call.
 */
export async function callToolStatus(resource: string, accessToken: string, name: string): Promise<number> {
  const post = (body: unknown, session?: string) =>
    fetch(resource, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }),
      },
      body: JSON.stringify(body),
    });
  const initialize = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  });
  await initialize.body?.cancel();
  if (initialize.status !== 200) throw new Error(`initialize answered ${initialize.status}`);
  const session = initialize.headers.get('mcp-session-id') ?? undefined;
  const call = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { a: 2, b: 3 } } }, session);
  await call.body?.cancel();
  return call.status;
}

/**
 * The official SDK client connected to `resource` through the gateway: the first connect sends the person through
 * `oauth`'s authorization; the code it brings back is exchanged and the client connects again.
 */
export async function connectSdkClient(resource: string, oauth: TestOAuthClient, name: string): Promise<Client> {
  const url = new URL(resource);
  const client = new Client({ name, version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: oauth }));
    return client;
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || oauth.code === undefined) throw error;
  }
  const transport = new StreamableHTTPClientTransport(url, { authProvider: oauth });
  await transport.finishAuth(oauth.code);
  await client.connect(transport);
  return client;
}
