import { z } from 'zod';
import type { Milliseconds } from '../../duration.js';
import { duration, rule, scopeList, secret, strictUrl } from '../../fields.js';
import type { ValueAt } from '../../problem.js';
import { bearerTokenProblem, headerNameProblem, headerValueProblem } from '../../rules.js';
import { Secret } from '../../secret.js';
import {
  authorizationCodeClientKeys,
  compileAuthorizationCodeClient,
  compileTokenEndpointClient,
  oneClientCredential,
  resourceIndicator,
  tokenEndpointClientKeys,
  type AuthorizationCodeClient,
  type TokenEndpointSettings,
} from '../oauth-clients.js';

/** `routes[].upstream.auth`: the credential the gateway sends upstream; the client's token is never forwarded. */

const clientCredentialsAuth = z
  .strictObject({ type: z.literal('client_credentials'), ...tokenEndpointClientKeys })
  .superRefine(oneClientCredential)
  .describe('OAuth client_credentials grant; the token is cached until shortly before it expires.');

const tokenExchangeAuth = z
  .strictObject({ type: z.literal('token_exchange'), ...tokenEndpointClientKeys })
  .superRefine(oneClientCredential)
  .describe(
    "RFC 8693 token exchange: the caller's token is sent only to token_endpoint as subject_token; the result is cached per caller and scope set.",
  );

/** Longest a user's grant may be kept: a year (the store, not a timer, holds it). */
const MAX_GRANT_TTL_MS = 8_760 * 3_600_000;

const userOAuthAuth = z
  .strictObject({
    type: z.literal('user_oauth'),
    issuer: strictUrl("Issuer of the upstream's own authorization server; its metadata is discovered (RFC 8414, then OpenID Connect)."),
    ...authorizationCodeClientKeys,
    scope: scopeList('Scopes requested from each user.'),
    resource: resourceIndicator,
    header: z
      .string()
      .superRefine(rule(headerNameProblem))
      .optional()
      .describe('Send the user\'s token in this header (bare) instead of `Authorization: Bearer <token>`.'),
    grant_ttl: duration('720h', 'How long a grant is kept after it was obtained or last refreshed.', {
      min: 60_000,
      max: MAX_GRANT_TTL_MS,
    }),
  })
  .describe(
    "Each user's own grant at the upstream's authorization server, obtained through a URL elicitation and the gateway's consent page (needs the top-level `consent` section).",
  );

export const upstreamAuthSchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('none') }).describe('No credential towards the upstream.'),
    z
      .strictObject({
        type: z.literal('bearer'),
        token: secret('Sent as `Authorization: Bearer <token>`.').superRefine(rule(bearerTokenProblem)),
      })
      .describe('A static bearer token.'),
    z
      .strictObject({
        type: z.literal('header'),
        name: z.string().superRefine(rule(headerNameProblem)).describe('Header name, e.g. X-Api-Key.'),
        value: secret('Header value.').superRefine(rule(headerValueProblem)),
      })
      .describe('A static custom header.'),
    clientCredentialsAuth,
    tokenExchangeAuth,
    userOAuthAuth,
  ])
  .prefault({ type: 'none' })
  .describe('Credential the gateway sends upstream (the client token is never forwarded). Default: {type: none}.');

export type RawUpstreamAuth = z.output<typeof upstreamAuthSchema>;

/** `user_oauth`: each user's own grant at the upstream's authorization server, obtained with their consent. */
export interface UserOAuthSettings extends AuthorizationCodeClient {
  /** Requested from each user; empty → no `scope` parameter. */
  readonly scopes: readonly string[];
  /** RFC 8707 `resource`, when set. */
  readonly resource: string | undefined;
  /** Lowercase header carrying the user's token: `authorization` (as `Bearer <token>`) or a bare custom header. */
  readonly header: string;
  /** A grant is kept this long after it was obtained or last refreshed. */
  readonly grantTtl: Milliseconds;
}

export type UpstreamAuth =
  | { readonly type: 'none' }
  | { readonly type: 'bearer'; readonly token: Secret }
  | { readonly type: 'header'; readonly name: string; readonly value: Secret }
  | ({ readonly type: 'client_credentials' } & TokenEndpointSettings)
  /** RFC 8693: the caller's token is the `subject_token`, sent to the token endpoint only. */
  | ({ readonly type: 'token_exchange' } & TokenEndpointSettings)
  | ({ readonly type: 'user_oauth' } & UserOAuthSettings);

export function compileUpstreamAuth(auth: RawUpstreamAuth): UpstreamAuth {
  switch (auth.type) {
    case 'none':
      return { type: 'none' };
    case 'bearer':
      return { type: 'bearer', token: new Secret(auth.token) };
    case 'header':
      return { type: 'header', name: auth.name, value: new Secret(auth.value) };
    case 'client_credentials':
    case 'token_exchange':
      return { type: auth.type, ...compileTokenEndpointClient(auth) };
    case 'user_oauth':
      return {
        type: 'user_oauth',
        ...compileAuthorizationCodeClient(auth.issuer, auth),
        scopes: auth.scope,
        resource: auth.resource,
        header: auth.header?.toLowerCase() ?? 'authorization',
        grantTtl: auth.grant_ttl,
      };
  }
}

/** The URLs this credential fetches, for the https rule (`at` is the route's path). */
export function upstreamAuthUrls(auth: RawUpstreamAuth, at: string): ValueAt[] {
  return [
    [`${at}.upstream.auth.token_endpoint`, 'token_endpoint' in auth ? auth.token_endpoint : undefined],
    [`${at}.upstream.auth.issuer`, auth.type === 'user_oauth' ? auth.issuer : undefined],
  ];
}

/** The secrets this credential holds, for the literal-secret warning (`at` is the route's path). */
export function upstreamAuthSecrets(auth: RawUpstreamAuth, at: string): ValueAt[] {
  switch (auth.type) {
    case 'none':
      return [];
    case 'bearer':
      return [[`${at}.upstream.auth.token`, auth.token]];
    case 'header':
      return [[`${at}.upstream.auth.value`, auth.value]];
    case 'client_credentials':
    case 'token_exchange':
      return [[`${at}.upstream.auth.client_secret`, auth.client_secret], [`${at}.upstream.auth.private_key`, auth.private_key]];
    case 'user_oauth':
      return [[`${at}.upstream.auth.client_secret`, auth.client_secret]];
  }
}
