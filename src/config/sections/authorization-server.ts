import { z } from 'zod';
import { MAX_RECORD_LIFETIME_MS, type Milliseconds } from '../duration.js';
import { duration, scope, secret, strictUrl } from '../fields.js';
import type { ConfigProblem, ValueAt } from '../problem.js';
import { Secret } from '../secret.js';
import { authorizationCodeClientKeys, compileAuthorizationCodeClient, type AuthorizationCodeClient } from './oauth-clients.js';

/**
 * `authorization_server`: the gateway as the OAuth authorization server of every route that names no other (no
 * `tokens`, no `authorization_servers`). It signs people in at the organisation's IdP (`sign_in`, OpenID Connect),
 * decides their scopes from the ID token's claims (`entitlements`) and issues JWT access tokens for the routes.
 */

/** Where the gateway's authorization server answers, under its issuer: no route may live there. */
export const AUTHORIZATION_SERVER_PATHS = {
  prefix: '/oauth',
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/register',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  jwks: '/oauth/jwks',
  interaction: '/oauth/interaction',
} as const;

const condition = z
  .strictObject({
    claim: z.string().min(1).describe('Name of the ID token claim.'),
    includes: z.string().optional().describe('The claim is this string, or a list holding it.'),
    equals: z.union([z.string(), z.number(), z.boolean()]).optional().describe('The claim equals this value.'),
  })
  .refine((value) => (value.includes === undefined) !== (value.equals === undefined), {
    error: 'exactly one of includes or equals is required',
  })
  .describe('Applies when the ID token claim matches; absent: applies to everyone who signs in.');

const entitlement = z
  .strictObject({
    scopes: z.array(scope).min(1).describe('Scopes a person this entry applies to may be granted.'),
    when: condition.optional(),
  })
  .describe('Scopes a person may be granted, by ID token claim.');

const preRegisteredClient = z
  .strictObject({
    client_id: z.string().min(1).describe('The client id the client sends.'),
    client_name: z.string().min(1).optional().describe('Shown on the consent page. Default: the client id.'),
    redirect_uris: z.array(z.string().min(1)).min(1).describe('Redirect URIs, matched exactly (https, or http on loopback).'),
    client_secret: secret('Makes the client confidential (client_secret_basic). Default: a public client (PKCE only).').optional(),
  })
  .describe('A client registered by the operator.');

export const authorizationServerSchema = z
  .strictObject({
    issuer: strictUrl('Issuer of the gateway\'s authorization server, on the public_url origin. Default: public_url.').optional(),
    signing_keys: secret(
      'A JWK Set (JSON) with private keys: the first signs access tokens, all are published at the JWKS endpoint.',
    ),
    sign_in: z
      .strictObject({
        issuer: strictUrl('Issuer of the organisation\'s OpenID Connect provider (its metadata is discovered).'),
        ...authorizationCodeClientKeys,
        scopes: z.array(scope).default(['openid', 'email', 'profile']).describe('Scopes asked at sign-in. Default: [openid, email, profile].'),
      })
      .describe(
        'The organisation\'s IdP people sign in at (OpenID Connect: code, PKCE, state, nonce). Register <public_url>/consent/login/callback there as the redirect URI.',
      ),
    entitlements: z
      .array(entitlement)
      .default([])
      .describe('The scopes a person may be granted, decided from the ID token claims: the union of every entry that applies. Default: [] (nobody gets any scope).'),
    clients: z.array(preRegisteredClient).default([]).describe('Clients registered by the operator. Default: [].'),
    registration: z
      .strictObject({
        dynamic: z.boolean().default(true).describe('RFC 7591 dynamic client registration at /register. Default: true.'),
        client_id_metadata_documents: z
          .boolean()
          .default(true)
          .describe('Accept https URLs of Client ID Metadata Documents as client ids. Default: true.'),
      })
      .prefault({})
      .describe('How unknown clients become known.'),
    access_token_ttl: duration('10m', 'Lifetime of an access token.', { min: 30_000, max: 86_400_000 }),
    refresh_token_ttl: duration('30d', 'Lifetime of a refresh token (each refresh rotates it).', { min: 60_000, max: MAX_RECORD_LIFETIME_MS }),
  })
  .optional()
  .describe(
    'The gateway as the OAuth authorization server of every route that names no tokens and no authorization_servers. Off unless set.',
  );

type RawAuthorizationServer = z.output<typeof authorizationServerSchema>;

export interface ClaimCondition {
  readonly claim: string;
  readonly includes?: string;
  readonly equals?: string | number | boolean;
}

export interface Entitlement {
  readonly scopes: readonly string[];
  /** Absent: everyone who signs in. */
  readonly when: ClaimCondition | undefined;
}

export interface PreRegisteredClient {
  readonly clientId: string;
  readonly clientName: string | undefined;
  readonly redirectUris: readonly string[];
  readonly clientSecret: Secret | undefined;
}

export interface AuthorizationServerSettings {
  /** Without a trailing slash. */
  readonly issuer: string;
  /** The JWK Set with private keys, as written: parsed by the authorization server at start. */
  readonly signingKeys: Secret;
  /** The public halves, for the routes' token verification. */
  readonly publicKeys: { readonly keys: readonly Record<string, unknown>[] };
  readonly signIn: AuthorizationCodeClient & { readonly scopes: readonly string[] };
  readonly entitlements: readonly Entitlement[];
  readonly clients: readonly PreRegisteredClient[];
  readonly dynamicRegistration: boolean;
  readonly clientIdMetadataDocuments: boolean;
  readonly accessTokenTtl: Milliseconds;
  readonly refreshTokenTtl: Milliseconds;
}

/** Members of a private JWK that must never be published. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const SIGNING_KEY_TYPES: ReadonlySet<string> = new Set(['EC', 'RSA', 'OKP']);

type ParsedKeys = { readonly keys: Record<string, unknown>[] } | { readonly problem: string };

/** The JWK Set of `signing_keys`: asymmetric private keys, each with a `kid` and an `alg`. */
export function parseSigningKeys(text: string): ParsedKeys {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'must be a JWK Set (JSON), e.g. {"keys": [{"kty": "EC", ...}]}' };
  }
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) return { problem: 'must be a JWK Set with at least one key ("keys": [...])' };
  for (const [index, key] of keys.entries()) {
    const jwk = key as Record<string, unknown> | null;
    if (typeof jwk !== 'object' || jwk === null || !SIGNING_KEY_TYPES.has(String(jwk.kty)) || typeof jwk.d !== 'string') {
      return { problem: `keys.${index} must be an EC, RSA or OKP private key (with "d")` };
    }
    if (typeof jwk.kid !== 'string' || jwk.kid === '' || typeof jwk.alg !== 'string' || jwk.alg.startsWith('HS')) {
      return { problem: `keys.${index} needs a "kid" and an asymmetric "alg" (e.g. ES256)` };
    }
  }
  return { keys: keys as Record<string, unknown>[] };
}

export function publicHalf(key: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(key).filter(([member]) => !PRIVATE_MEMBERS.includes(member)));
}

/** `signing_keys` that cannot sign, an issuer the gateway does not serve, entitlements of no route. */
export function authorizationServerProblems(raw: RawAuthorizationServer, publicUrl: string): ConfigProblem[] {
  if (raw === undefined) return [];
  const problems: ConfigProblem[] = [];
  const parsed = parseSigningKeys(raw.signing_keys);
  if ('problem' in parsed) problems.push({ path: 'authorization_server.signing_keys', message: parsed.problem });
  if (raw.issuer !== undefined && new URL(raw.issuer).origin !== new URL(publicUrl).origin) {
    problems.push({ path: 'authorization_server.issuer', message: `must be on the public_url origin (${new URL(publicUrl).origin}): the gateway serves it` });
  }
  if (!raw.sign_in.scopes.includes('openid')) {
    problems.push({ path: 'authorization_server.sign_in.scopes', message: 'must include openid (the sign-in is OpenID Connect)' });
  }
  return problems;
}

export function compileAuthorizationServer(raw: RawAuthorizationServer, publicBase: string): AuthorizationServerSettings | undefined {
  if (raw === undefined) return undefined;
  const parsed = parseSigningKeys(raw.signing_keys);
  // authorizationServerProblems has refused a config whose keys do not parse.
  const keys = 'keys' in parsed ? parsed.keys : [];
  return {
    issuer: (raw.issuer ?? publicBase).replace(/\/$/, ''),
    signingKeys: new Secret(raw.signing_keys),
    publicKeys: { keys: keys.map(publicHalf) },
    signIn: { ...compileAuthorizationCodeClient(raw.sign_in.issuer, raw.sign_in), scopes: raw.sign_in.scopes },
    entitlements: raw.entitlements.map((entry) => ({ scopes: entry.scopes, when: entry.when })),
    clients: raw.clients.map((client) => ({
      clientId: client.client_id,
      clientName: client.client_name,
      redirectUris: client.redirect_uris,
      clientSecret: client.client_secret === undefined ? undefined : new Secret(client.client_secret),
    })),
    dynamicRegistration: raw.registration.dynamic,
    clientIdMetadataDocuments: raw.registration.client_id_metadata_documents,
    accessTokenTtl: raw.access_token_ttl,
    refreshTokenTtl: raw.refresh_token_ttl,
  };
}

/** The URLs this section fetches or advertises, for the https rule. */
export function authorizationServerUrls(raw: RawAuthorizationServer): ValueAt[] {
  return [
    ['authorization_server.issuer', raw?.issuer],
    ['authorization_server.sign_in.issuer', raw?.sign_in.issuer],
  ];
}

/** The secrets this section holds, for the literal-secret warning. */
export function authorizationServerSecrets(raw: RawAuthorizationServer): ValueAt[] {
  return [
    ['authorization_server.signing_keys', raw?.signing_keys],
    ['authorization_server.sign_in.client_secret', raw?.sign_in.client_secret],
    ...(raw?.clients ?? []).map((client, index): ValueAt => [`authorization_server.clients.${index}.client_secret`, client.client_secret]),
  ];
}
