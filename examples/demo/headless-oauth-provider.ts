import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FlowListener } from './flow-trace.js';
import { authorizeHeadlessly } from './headless-authorization.js';

export interface HeadlessOAuthOptions {
  /** Loopback redirect URI. Nothing needs to listen on it: the authorization response is read from the redirect. */
  readonly redirectUrl: string;
  readonly clientName?: string;
  /**
   * A Client ID Metadata Document URL to use as client_id when the authorization server supports them; else the
   * client registers dynamically (RFC 7591).
   */
  readonly clientMetadataUrl?: string;
  /**
   * Default true. Without refresh tokens the SDK re-authorizes instead of refreshing, which is what a step-up to
   * a wider scope needs (a refresh cannot widen the grant).
   */
  readonly refreshTokens?: boolean;
  readonly onEvent?: FlowListener;
  /** Used to follow the authorization redirects. */
  readonly fetch?: typeof fetch;
}

/**
 * The client's metadata: what it registers dynamically, or what its Client ID Metadata Document says (plus
 * `client_id`). A public client (no secret) on the authorization code grant.
 */
export function headlessClientMetadata(
  options: Pick<HeadlessOAuthOptions, 'redirectUrl' | 'clientName' | 'refreshTokens'>,
): OAuthClientMetadata {
  const refresh = options.refreshTokens ?? true;
  return {
    client_name: options.clientName ?? 'mcp-auth-gateway demo client',
    redirect_uris: [options.redirectUrl],
    grant_types: refresh ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/**
 * An OAuthClientProvider for the official SDK client with everything in memory and no browser: when the SDK
 * asks to redirect the user, it follows the authorization request itself (see `authorizeHeadlessly`), checks the
 * returned state and keeps the code for `takeAuthorizationCode()`, which the caller hands to the transport's
 * `finishAuth`.
 *
 * Client ID Metadata Documents: SDK 1.32 uses `clientMetadataUrl` only for https URLs, while development documents
 * are served on loopback http. So the provider applies the same rule itself: once discovery has shown the
 * authorization server's `client_id_metadata_document_supported`, the URL is the client information.
 */
export class HeadlessOAuthClientProvider implements OAuthClientProvider {
  readonly #options: HeadlessOAuthOptions;
  #clientInformation: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #codeVerifier: string | undefined;
  #discovery: OAuthDiscoveryState | undefined;
  #state: string | undefined;
  #code: string | undefined;
  #iss: string | undefined;

  constructor(options: HeadlessOAuthOptions) {
    this.#options = options;
  }

  get redirectUrl(): string {
    return this.#options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return headlessClientMetadata(this.#options);
  }

  /** The granted scope of the current access token (never the token itself). */
  get grantedScope(): string | undefined {
    return this.#tokens?.scope;
  }

  state(): string {
    this.#state = randomBytes(16).toString('base64url');
    return this.#state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    if (this.#clientInformation !== undefined) return this.#clientInformation;
    const url = this.#options.clientMetadataUrl;
    if (url === undefined || this.#discovery?.authorizationServerMetadata?.client_id_metadata_document_supported !== true) {
      return undefined;
    }
    this.#clientInformation = { client_id: url };
    this.#options.onEvent?.({ kind: 'client_id_metadata_document', clientId: url });
    return this.#clientInformation;
  }

  saveClientInformation(clientInformation: OAuthClientInformationMixed): void {
    this.#clientInformation = clientInformation;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.#codeVerifier === undefined) throw new Error('no PKCE code verifier saved');
    return this.#codeVerifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.#clientInformation = undefined;
    if (scope === 'all' || scope === 'tokens') this.#tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.#codeVerifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const params = authorizationUrl.searchParams;
    this.#options.onEvent?.({
      kind: 'authorization',
      clientId: params.get('client_id') ?? '',
      scope: params.get('scope') ?? undefined,
      resource: params.get('resource') ?? undefined,
      codeChallengeMethod: params.get('code_challenge_method') ?? undefined,
      redirectUri: params.get('redirect_uri') ?? '',
    });
    const expectedState = this.#state;
    this.#state = undefined;
    const response = await authorizeHeadlessly(authorizationUrl, new URL(this.redirectUrl), this.#options.fetch);
    if (expectedState === undefined || response.state !== expectedState) {
      throw new Error('authorization response state does not match the request');
    }
    this.#code = response.code;
    this.#iss = response.iss;
    this.#options.onEvent?.({ kind: 'authorization_response' });
  }

  /** The code from the last authorization, once: pass it to `transport.finishAuth`. */
  takeAuthorizationCode(): string {
    const code = this.#code;
    this.#code = undefined;
    if (code === undefined) throw new Error('no authorization code: the authorization did not complete');
    return code;
  }

  /**
   * The last authorization response as its callback URL's query (`code`, and `iss` when the server sent it), once:
   * for clients that check RFC 9207 `iss` in `finishAuth` (SDK 2).
   */
  takeCallbackParams(): URLSearchParams {
    const iss = this.#iss;
    this.#iss = undefined;
    return new URLSearchParams({ code: this.takeAuthorizationCode(), ...(iss === undefined ? {} : { iss }) });
  }
}
