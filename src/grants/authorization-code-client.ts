import { startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthMetadataSchema, type OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { discoverIssuerMetadata, metadataUrl } from '../auth/issuer-metadata.js';
import type { AuthorizationCodeClient } from '../config/types.js';
import {
  createTokenRequester,
  createTokenRevoker,
  type TokenRequester,
  type TokenRequestResult,
  type TokenRevoker,
} from '../credentials/token-endpoint.js';

/** An authorization server's endpoints, from its metadata (RFC 8414 / OpenID Connect Discovery). */
export interface AuthorizationServerEndpoints {
  readonly metadata: OAuthMetadata;
  readonly tokenEndpoint: URL;
  /** OpenID Connect key set, when advertised. */
  readonly jwksUri: URL | undefined;
  /** RFC 7009, when advertised. */
  readonly revocationEndpoint: URL | undefined;
}

/** A redirect to the authorization endpoint and what the callback needs to redeem its code. */
export interface AuthorizationRequest {
  readonly url: URL;
  readonly codeVerifier: string;
}

export interface AuthorizationRequestParameters {
  readonly redirectUri: string;
  readonly state: string;
  readonly scope: string | undefined;
  /** OpenID Connect: bound into the ID token. */
  readonly nonce?: string;
}

/**
 * The gateway as an OAuth client of one authorization server with the authorization code grant: metadata
 * discovered and kept for a while, authorization requests with PKCE S256, `state` and RFC 8707 `resource`, token
 * requests through the token endpoint client (whose checks every answer passes), RFC 7009 revocation.
 * `undefined` from `endpoints()` (and the methods needing them) means the server could not be reached.
 */
export interface AuthorizationCodeFlow {
  readonly issuer: string;
  endpoints(): Promise<AuthorizationServerEndpoints | undefined>;
  authorizationRequest(parameters: AuthorizationRequestParameters): Promise<AuthorizationRequest | undefined>;
  redeemCode(code: string, codeVerifier: string, redirectUri: string): Promise<TokenRequestResult>;
  refresh(refreshToken: string): Promise<TokenRequestResult>;
  /** True when the server confirmed; false when it has no revocation endpoint or did not answer. */
  revoke(token: string, hint: 'access_token' | 'refresh_token'): Promise<boolean>;
}

export interface AuthorizationCodeFlowDeps {
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

/** Metadata is fetched again after this long (and at once after a failure, which is never kept). */
const METADATA_TTL_MS = 10 * 60_000;
const S256 = 'S256';

/** What the flow needs from a metadata document; anything else (no PKCE S256, no code flow, bad URLs) is refused. */
function endpointsOf(document: Readonly<Record<string, unknown>>): AuthorizationServerEndpoints | undefined {
  const parsed = OAuthMetadataSchema.safeParse(document);
  if (!parsed.success) return undefined;
  const metadata = parsed.data;
  const authorizationEndpoint = metadataUrl(metadata.authorization_endpoint);
  const tokenEndpoint = metadataUrl(metadata.token_endpoint);
  // Like MCP clients: an authorization server that does not advertise PKCE S256 is not used (RFC 8414 §2).
  if (!authorizationEndpoint || !tokenEndpoint || !metadata.code_challenge_methods_supported?.includes(S256)) return undefined;
  if (!metadata.response_types_supported.includes('code')) return undefined;
  return {
    metadata,
    tokenEndpoint,
    jwksUri: metadataUrl(document.jwks_uri),
    revocationEndpoint: metadataUrl(metadata.revocation_endpoint),
  };
}

export function createAuthorizationCodeFlow(
  client: AuthorizationCodeClient,
  options: { readonly resource: string | undefined },
  deps: AuthorizationCodeFlowDeps = {},
): AuthorizationCodeFlow {
  const now = deps.now ?? Date.now;
  let known: { readonly endpoints: AuthorizationServerEndpoints; readonly until: number; readonly requestToken: TokenRequester; readonly revoke: TokenRevoker } | undefined;
  let discovering: Promise<typeof known> | undefined;

  async function discover(): Promise<typeof known> {
    const endpoints = await discoverIssuerMetadata(client.issuer, { fetch: deps.fetch, timeoutMs: client.timeout }, endpointsOf);
    if (!endpoints) return undefined;
    // `resource` goes with every token request (RFC 8707 §2.2); scope was settled at authorization.
    const settings = {
      tokenEndpoint: endpoints.tokenEndpoint,
      clientId: client.clientId,
      clientAuth: client.clientAuth,
      scopes: [],
      resource: options.resource,
      audience: undefined,
      timeout: client.timeout,
    };
    const tokenDeps = { fetch: deps.fetch, now };
    known = { endpoints, until: now() + METADATA_TTL_MS, requestToken: createTokenRequester(settings, tokenDeps), revoke: createTokenRevoker(settings, tokenDeps) };
    return known;
  }

  /** Single flight: one metadata lookup however many callers wait. */
  function current(): Promise<typeof known> {
    if (known && known.until > now()) return Promise.resolve(known);
    discovering ??= discover().finally(() => {
      discovering = undefined;
    });
    return discovering;
  }

  const unreachable: TokenRequestResult = { ok: false, failure: 'network' };

  return {
    issuer: client.issuer,
    endpoints: async () => (await current())?.endpoints,
    async authorizationRequest({ redirectUri, state, scope, nonce }) {
      const server = await current();
      if (!server) return undefined;
      const { authorizationUrl, codeVerifier } = await startAuthorization(client.issuer, {
        metadata: server.endpoints.metadata,
        clientInformation: { client_id: client.clientId },
        redirectUrl: redirectUri,
        state,
        ...(scope === undefined ? {} : { scope }),
        ...(options.resource === undefined ? {} : { resource: options.resource }),
      });
      if (nonce !== undefined) authorizationUrl.searchParams.set('nonce', nonce);
      return { url: authorizationUrl, codeVerifier };
    },
    async redeemCode(code, codeVerifier, redirectUri) {
      const server = await current();
      if (!server) return unreachable;
      return server.requestToken({ grant_type: 'authorization_code', code, code_verifier: codeVerifier, redirect_uri: redirectUri });
    },
    async refresh(refreshToken) {
      const server = await current();
      if (!server) return unreachable;
      return server.requestToken({ grant_type: 'refresh_token', refresh_token: refreshToken });
    },
    async revoke(token, hint) {
      const server = await current();
      const endpoint = server?.endpoints.revocationEndpoint;
      return server !== undefined && endpoint !== undefined && server.revoke(endpoint, token, hint);
    },
  };
}
