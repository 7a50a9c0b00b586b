import type { Logger } from 'pino';

export type AccessTokenFormat = 'jwt' | 'opaque';

export type DevClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

/** One protected resource the server issues tokens for: a gateway route's canonical resource URI. */
export interface DevResource {
  readonly resource: string;
  /** Scopes a client may obtain for this resource (route scopes_supported ∪ policy scopes). */
  readonly scopes: readonly string[];
  /** What an authorization request without `scope` asks for: the route's scopes_supported. Default: nothing. */
  readonly defaultScopes?: readonly string[];
  /**
   * `jwt` (default): RFC 9068 JWT access tokens. `opaque`: reference tokens, for routes validated by introspection
   * (oidc-provider cannot introspect its own JWT access tokens).
   */
  readonly accessTokenFormat?: AccessTokenFormat;
}

/** A pre-registered client; a confidential one (with a secret) may also call the introspection endpoint. */
export interface DevClient {
  readonly client_id: string;
  readonly client_secret?: string;
  readonly client_name?: string;
  readonly redirect_uris?: readonly string[];
  readonly grant_types?: readonly string[];
  /** Default: `client_secret_basic` with a secret, else `none`. */
  readonly token_endpoint_auth_method?: DevClientAuthMethod;
}

export interface DevAuthServerOptions {
  /** Interface to bind; default 127.0.0.1. */
  readonly host?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Default `http://<host>:<port>`. Plain http is accepted only for a loopback host. No path component. */
  readonly issuer?: string;
  readonly resources: readonly DevResource[];
  readonly clients?: readonly DevClient[];
  /** Headless: log in as the demo user and approve every request without showing a page. */
  readonly autoApprove?: boolean;
  /**
   * Tests only (the CLI never sets it): the account the next sign-in becomes, asked at each sign-in. Default: always
   * `demo-user`. Lets one server sign in two users, for isolation tests.
   */
  readonly signInAs?: () => string;
  /** Tests only: an account's claims besides `sub` (e.g. `groups`), in its ID tokens, as an organisation's IdP would. */
  readonly accountClaims?: (accountId: string) => Readonly<Record<string, unknown>>;
  /** Development only: accept Client ID Metadata Documents served over http from a loopback host. */
  readonly allowLoopbackClientMetadata?: boolean;
  /** Default 300. */
  readonly accessTokenTtlSeconds?: number;
  /**
   * A file keeping the signing key across restarts (created 0600 when missing), so tokens issued before a restart
   * still validate. Default: a fresh key per start.
   */
  readonly signingKeysFile?: string;
  /**
   * A file keeping dynamically registered clients across restarts (created 0600 when missing). Default: in memory.
   */
  readonly clientsFile?: string;
  /** Default true: clients registered for `refresh_token` get rotated refresh tokens. */
  readonly issueRefreshTokens?: boolean;
  readonly logger?: Logger;
}

export interface DevAuthServer {
  /** Where the server listens, e.g. `http://127.0.0.1:54321`. */
  readonly url: string;
  readonly issuer: string;
  readonly jwksUri: string;
  readonly introspectionEndpoint: string;
  close(): Promise<void>;
}
