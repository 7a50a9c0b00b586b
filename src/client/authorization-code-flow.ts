import { randomBytes } from 'node:crypto';
import { exchangeAuthorization, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { checkAuthorizationResponse } from './authorization-response.js';
import { bearerTokenProblem } from './bearer-token.js';
import type { AuthorizationServerFound } from './discovery.js';
import type { RedirectListener } from './loopback-redirect.js';
import type { Redactor } from './redaction.js';

export interface AuthorizationCodeFlow {
  readonly server: AuthorizationServerFound;
  readonly client: OAuthClientInformationMixed;
  /** The RFC 8707 resource, sent in both the authorization and the token request. */
  readonly resource: string;
  readonly redirect: RedirectListener;
  /** Sends the user to the authorization URL (a browser, or a printed line); may resolve before they are back. */
  readonly presentAuthorizationUrl: (url: URL) => Promise<void>;
  readonly authorizationTimeoutMs: number;
  readonly fetch: FetchLike;
  /** Receives the code, the PKCE verifier and the tokens, so nothing printed afterwards can carry them. */
  readonly redactor: Redactor;
}

/**
 * One authorization code grant with PKCE S256 (the SDK builds the request and exchanges the code): a fresh
 * `state` that the response must carry, its `iss` checked (authorization-response.ts), `resource` in both
 * requests, the code taken from the loopback redirect.
 * An access token that could not go in an `Authorization` header is refused here, before any request carries it.
 */
export async function runAuthorizationCodeFlow(flow: AuthorizationCodeFlow, scope: string | undefined): Promise<OAuthTokens> {
  const state = randomBytes(24).toString('base64url');
  const { metadata, server } = flow.server;
  const { authorizationUrl, codeVerifier } = await startAuthorization(server, {
    metadata,
    clientInformation: flow.client,
    redirectUrl: flow.redirect.redirectUri,
    scope,
    state,
    resource: flow.resource,
  });
  flow.redactor.add(codeVerifier);
  const abandon = new AbortController();
  const response = flow.redirect.expect(state, {
    timeoutMs: flow.authorizationTimeoutMs,
    signal: abandon.signal,
    check: (parameters) => checkAuthorizationResponse(flow.server, flow.client.client_id, state, parameters),
  });
  try {
    await flow.presentAuthorizationUrl(authorizationUrl);
  } catch (error) {
    abandon.abort();
    await response.catch(() => undefined);
    throw error;
  }
  const { code } = await response;
  flow.redactor.add(code);
  const tokens = await exchangeAuthorization(server, {
    metadata,
    clientInformation: flow.client,
    authorizationCode: code,
    codeVerifier,
    redirectUri: flow.redirect.redirectUri,
    resource: flow.resource,
    fetchFn: flow.fetch,
  });
  flow.redactor.add(tokens.access_token);
  flow.redactor.add(tokens.refresh_token);
  const problem = bearerTokenProblem(tokens.access_token);
  if (problem !== undefined) throw new Error(`the authorization server issued an access token that is not a bearer token: ${problem}`);
  return tokens;
}
