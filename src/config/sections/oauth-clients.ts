import { z } from 'zod';
import type { Milliseconds } from '../duration.js';
import { MIN_TIMEOUT_MS, clientSecretMethod, duration, privateKey, scopeListOrString, secret, strictUrl, upstreamUrl } from '../fields.js';
import { Secret } from '../secret.js';

/**
 * The gateway as an OAuth client of another authorization server, in the two shapes the sections share: at a token
 * endpoint (upstream.auth client_credentials and token_exchange), and through the authorization code grant with
 * PKCE at an issuer found through its metadata (upstream.auth user_oauth, consent.login).
 */

/** The upstream's RFC 8707 resource indicator: any absolute http(s) URI (upstreams may be pod-local). */
export const resourceIndicator = upstreamUrl()
  .optional()
  .describe('RFC 8707 resource indicator of the upstream (sent as `resource`).');

/**
 * How the gateway authenticates itself at the upstream's token endpoint: `client_secret` (basic or post) or
 * `private_key` (RFC 7523 private_key_jwt), exactly one.
 */
export const tokenEndpointClientKeys = {
  token_endpoint: strictUrl("Token endpoint of the upstream's authorization server."),
  client_id: z.string().min(1).describe('Client id of the gateway at that authorization server.'),
  client_secret: secret('Client secret (client_secret_basic or client_secret_post).').optional(),
  private_key: privateKey('Key for private_key_jwt client authentication (RFC 7523).').optional(),
  auth_method: clientSecretMethod('How client_secret is sent. Default: client_secret_basic. Ignored with private_key.'),
  scope: scopeListOrString('Scopes requested for the upstream token.'),
  resource: resourceIndicator,
  audience: z.string().min(1).optional().describe('Audience requested (sent as `audience`, RFC 8693 / vendor).'),
  timeout: duration('5s', 'Timeout of one token request.', { min: MIN_TIMEOUT_MS }),
};

export function oneClientCredential(value: { client_secret?: string; private_key?: string }, ctx: z.RefinementCtx): void {
  if ((value.client_secret === undefined) === (value.private_key === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['client_secret'], message: 'exactly one of client_secret or private_key is required' });
  }
}

/** A client of an OAuth authorization server reached through its metadata (user_oauth, consent.login). */
export const authorizationCodeClientKeys = {
  client_id: z.string().min(1).describe('Client id of the gateway at that authorization server.'),
  client_secret: secret('Client secret; without it the gateway is a public client (PKCE only).').optional(),
  auth_method: clientSecretMethod('How client_secret is sent. Default: client_secret_basic.'),
  timeout: duration('5s', 'Timeout of one request to that authorization server.', { min: MIN_TIMEOUT_MS }),
};

type RawTokenEndpointClient = z.output<z.ZodObject<typeof tokenEndpointClientKeys>>;
type RawAuthorizationCodeClient = z.output<z.ZodObject<typeof authorizationCodeClientKeys>>;

/**
 * How the gateway authenticates at a token endpoint. `privateKey` is a JWK or PEM text (private_key_jwt); `none`
 * is a public client (RFC 6749 §2.1, authorization code with PKCE), which sends only its client_id.
 */
export type TokenEndpointClientAuth =
  | { readonly method: 'client_secret_basic' | 'client_secret_post'; readonly clientSecret: Secret }
  | { readonly method: 'private_key_jwt'; readonly privateKey: Secret }
  | { readonly method: 'none' };

/** An OAuth token endpoint the gateway obtains upstream tokens from (client_credentials, token exchange). */
export interface TokenEndpointSettings {
  readonly tokenEndpoint: URL;
  readonly clientId: string;
  readonly clientAuth: TokenEndpointClientAuth;
  /** Requested scopes; empty → no `scope` parameter. */
  readonly scopes: readonly string[];
  /** RFC 8707 `resource` parameter, when set. */
  readonly resource: string | undefined;
  /** `audience` parameter, when set. */
  readonly audience: string | undefined;
  readonly timeout: Milliseconds;
}

/** A client of an authorization server found through its metadata: the authorization code grant with PKCE. */
export interface AuthorizationCodeClient {
  /** Issuer; its metadata is discovered (RFC 8414, then OpenID Connect). */
  readonly issuer: string;
  readonly clientId: string;
  /** `none` without a client secret (public client). */
  readonly clientAuth: TokenEndpointClientAuth;
  /** Of one request to that authorization server. */
  readonly timeout: Milliseconds;
}

export function compileTokenEndpointClient(raw: RawTokenEndpointClient): TokenEndpointSettings {
  return {
    tokenEndpoint: new URL(raw.token_endpoint),
    clientId: raw.client_id,
    // The schema guarantees exactly one of private_key and client_secret.
    clientAuth:
      raw.private_key === undefined
        ? { method: raw.auth_method, clientSecret: new Secret(raw.client_secret ?? '') }
        : { method: 'private_key_jwt', privateKey: new Secret(raw.private_key) },
    scopes: raw.scope,
    resource: raw.resource,
    audience: raw.audience,
    timeout: raw.timeout,
  };
}

export function compileAuthorizationCodeClient(issuer: string, raw: RawAuthorizationCodeClient): AuthorizationCodeClient {
  return {
    issuer,
    clientId: raw.client_id,
    clientAuth:
      raw.client_secret === undefined ? { method: 'none' } : { method: raw.auth_method, clientSecret: new Secret(raw.client_secret) },
    timeout: raw.timeout,
  };
}
