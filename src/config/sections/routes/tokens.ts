import { z } from 'zod';
import type { Milliseconds } from '../../duration.js';
import { MIN_TIMEOUT_MS, clientSecretMethod, duration, privateKey, secret, strictUrl, type ClientSecretMethod } from '../../fields.js';
import type { ValueAt } from '../../problem.js';
import { optionalSecret, type Secret } from '../../secret.js';

/** `routes[].tokens`: how access tokens are validated: as a JWT (RFC 9068), by introspection (RFC 7662) or both. */

export const JWT_ALGORITHMS = [
  'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
] as const;

/** Asymmetric JWS algorithms only: HS* would let anyone holding the verification key mint tokens, `none` anyone. */
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

const audienceValue = z.string().min(1, { error: 'must not be empty' });

const jwt = z
  .strictObject({
    issuer: strictUrl('Expected `iss`, compared exactly; also where keys are discovered.'),
    jwks_uri: strictUrl('JWKS URL. Default: discovered from the issuer metadata.').optional(),
    algorithms: z
      .array(z.enum(JWT_ALGORITHMS, {
        error: `must be one of ${JWT_ALGORITHMS.join(', ')} (HS* and none are never accepted)`,
      }))
      .min(1)
      .default(['RS256', 'ES256'])
      .describe('Accepted signature algorithms. Default: [RS256, ES256].'),
    audience: z
      .union([audienceValue, z.array(audienceValue).min(1, { error: 'must name at least one audience' })])
      .optional()
      .describe(
        'Expected `aud`: one value, or a list of which a token must carry at least one (an IdP whose audience is an ' +
          'app id or a URN rather than the resource). Default: the route resource.',
      ),
    strict_audience: z
      .boolean()
      .default(false)
      .describe('Require `aud` to be exactly one value, one of the audiences. Default: false.'),
    clock_tolerance: duration('30s', 'Allowed clock skew for exp/nbf/iat.', { max: 300_000 }),
    require_typ: z.boolean().default(false).describe('Require the header `typ: at+jwt` (RFC 9068). Default: false.'),
    max_lifetime: duration('24h', 'Longest accepted token lifetime (exp − iat).', { min: 1_000 }),
    jwks_stale_window: duration('10m', 'How long last-known keys stay usable while the JWKS endpoint is down.'),
    jwks_cooldown: duration(
      '5s',
      'Minimum time between JWKS refetches for a kid the key set lacks: a rotated key is accepted within it, a flood of unknown kids costs one fetch per cooldown.',
    ),
    fetch_timeout: duration('5s', 'Timeout of one JWKS or metadata request.', { min: MIN_TIMEOUT_MS }),
  })
  .describe('Validate access tokens as JWTs (RFC 9068).');

const introspection = z
  .strictObject({
    endpoint: strictUrl('RFC 7662 introspection endpoint.'),
    client_id: z.string().min(1).describe('Client id the gateway authenticates with.'),
    client_secret: secret('Client secret for the introspection endpoint.').optional(),
    private_key: privateKey(
      'Key for private_key_jwt client authentication (RFC 7523) instead of client_secret; the assertion\'s `aud` is ' +
        'the endpoint URL.',
    ).optional(),
    auth_method: clientSecretMethod('How client_secret is sent. Default: client_secret_basic. Ignored with private_key.'),
    issuer: strictUrl('Expected `iss` in answers. Default: tokens.jwt.issuer when set.').optional(),
    accept_missing_aud: z
      .boolean()
      .default(false)
      .describe(
        'Accept an active answer without `aud` (RFC 7662 makes it optional): every token the endpoint vouches for is ' +
          'then good on this route, so set it only for an authorization server whose tokens are all meant for it. An ' +
          '`aud` without the route\'s audience is still refused. Default: false.',
      ),
    accept_missing_iss: z
      .boolean()
      .default(false)
      .describe(
        'Accept an active answer without `iss` (RFC 7662 makes it optional) as issued by the expected issuer; needs ' +
          'an expected issuer (issuer or tokens.jwt.issuer). Another `iss` is still refused. Default: false.',
      ),
    timeout: duration('3s', 'Timeout of one introspection request.', { min: MIN_TIMEOUT_MS }),
    clock_tolerance: duration('30s', 'Allowed clock skew for an answer\'s nbf (exp is never stretched: a cached answer ends at exp).', {
      max: 300_000,
    }),
    cache: z
      .strictObject({
        max_ttl: duration('60s', 'Longest a positive answer is cached: the accepted revocation delay.'),
        negative_ttl: duration('10s', 'How long an `active: false` answer is cached.'),
      })
      .prefault({})
      .describe('Introspection answer cache.'),
  })
  .superRefine((value, ctx) => {
    if (value.client_secret !== undefined && value.private_key !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['private_key'], message: 'at most one of client_secret or private_key' });
    }
  })
  .describe('Validate access tokens by RFC 7662 introspection.');

export const tokensSchema = z
  .strictObject({ jwt: jwt.optional(), introspection: introspection.optional() })
  .refine((value) => value.jwt !== undefined || value.introspection !== undefined, {
    error: 'at least one of jwt or introspection is required',
  })
  .refine((value) => !value.introspection?.accept_missing_iss || (value.introspection.issuer ?? value.jwt?.issuer) !== undefined, {
    path: ['introspection', 'accept_missing_iss'],
    error: 'needs an expected issuer (tokens.introspection.issuer or tokens.jwt.issuer): without one `iss` is not checked at all',
  })
  .describe('How access tokens are validated: jwt, introspection, or both.');

export type RawTokens = z.output<typeof tokensSchema>;

export interface JwtSettings {
  readonly issuer: string;
  /** Explicit JWKS URL; absent → discovered from the issuer's metadata (RFC 8414, then OpenID Connect). */
  readonly jwksUri: URL | undefined;
  readonly algorithms: readonly JwtAlgorithm[];
  /** Accepted `aud` values, a token must carry one of them; the route's resource unless overridden. */
  readonly audiences: readonly string[];
  /** `true` → `aud` must be exactly one value, one of `audiences` (a single-valued array counts); `false` → membership. */
  readonly strictAudience: boolean;
  readonly clockTolerance: Milliseconds;
  /** `true` → the JWT header `typ` must be `at+jwt` (RFC 9068), case-insensitive, `application/` prefix allowed. */
  readonly requireTyp: boolean;
  /** Longest accepted `exp − iat` (or `exp − now` without iat): bounds tokens minted with huge lifetimes. */
  readonly maxLifetime: Milliseconds;
  /** How long keys from the last good JWKS fetch stay usable while the JWKS endpoint is unreachable. */
  readonly jwksStaleWindow: Milliseconds;
  /** Minimum time between JWKS refetches triggered by an unknown `kid` (after a successful fetch). */
  readonly jwksCooldown: Milliseconds;
  /** Timeout for one JWKS or metadata HTTP request. */
  readonly fetchTimeout: Milliseconds;
  /** The gateway's own authorization server's public keys: used as they are, never fetched. */
  readonly localKeys?: { readonly keys: readonly Record<string, unknown>[] };
}

export type IntrospectionAuthMethod = ClientSecretMethod;

export interface IntrospectionSettings {
  readonly endpoint: URL;
  readonly clientId: string;
  readonly clientSecret: Secret | undefined;
  /** How `clientSecret` is sent; ignored with `privateKey`. */
  readonly authMethod: IntrospectionAuthMethod;
  /** JWK or PEM text: private_key_jwt client authentication (RFC 7523) instead of a secret. */
  readonly privateKey: Secret | undefined;
  /** Expected `iss` in introspection answers, when set (defaults to the route's jwt issuer if any). */
  readonly issuer: string | undefined;
  /** An active answer without `aud` is accepted (opt-in: RFC 7662 makes `aud` optional). */
  readonly acceptMissingAudience: boolean;
  /** An active answer without `iss` counts as from `issuer` (opt-in: RFC 7662 makes `iss` optional). */
  readonly acceptMissingIssuer: boolean;
  readonly timeout: Milliseconds;
  /** Allowed clock skew for an answer's `nbf`; `exp` gets none, so no cached answer outlives it. */
  readonly clockTolerance: Milliseconds;
  /** Upper bound of a positive cache entry: the revocation delay operators accept. */
  readonly maxTtl: Milliseconds;
  /** Lifetime of a cached `active: false` answer. */
  readonly negativeTtl: Milliseconds;
}

export interface TokenSettings {
  readonly jwt: JwtSettings | undefined;
  readonly introspection: IntrospectionSettings | undefined;
}

/** `resource` is the route's canonical resource URI, the audience unless `jwt.audience` names others. */
export function compileTokens(raw: RawTokens, resource: string): TokenSettings {
  const { jwt, introspection } = raw;
  return {
    jwt: jwt && {
      issuer: jwt.issuer,
      jwksUri: jwt.jwks_uri === undefined ? undefined : new URL(jwt.jwks_uri),
      algorithms: jwt.algorithms,
      audiences: jwt.audience === undefined ? [resource] : [jwt.audience].flat(),
      strictAudience: jwt.strict_audience,
      clockTolerance: jwt.clock_tolerance,
      requireTyp: jwt.require_typ,
      maxLifetime: jwt.max_lifetime,
      jwksStaleWindow: jwt.jwks_stale_window,
      jwksCooldown: jwt.jwks_cooldown,
      fetchTimeout: jwt.fetch_timeout,
    },
    introspection: introspection && {
      endpoint: new URL(introspection.endpoint),
      clientId: introspection.client_id,
      clientSecret: optionalSecret(introspection.client_secret),
      authMethod: introspection.auth_method,
      privateKey: optionalSecret(introspection.private_key),
      issuer: introspection.issuer ?? jwt?.issuer,
      acceptMissingAudience: introspection.accept_missing_aud,
      acceptMissingIssuer: introspection.accept_missing_iss,
      timeout: introspection.timeout,
      clockTolerance: introspection.clock_tolerance,
      maxTtl: introspection.cache.max_ttl,
      negativeTtl: introspection.cache.negative_ttl,
    },
  };
}

/** The gateway's own authorization server, as the routes without `tokens` verify its access tokens. */
export interface GatewayIssuer {
  readonly issuer: string;
  readonly jwksUri: string;
  readonly publicKeys: { readonly keys: readonly Record<string, unknown>[] };
  readonly accessTokenTtl: Milliseconds;
}

const GATEWAY_CLOCK_TOLERANCE_MS = 30_000;

/**
 * RFC 9068 JWTs the gateway signed itself: its issuer, its keys (held in process), `aud` exactly the route's
 * resource, `typ: at+jwt`, no longer-lived than it issues them.
 */
export function gatewayIssuedTokens(gateway: GatewayIssuer, resource: string): TokenSettings {
  const algorithms = JWT_ALGORITHMS.filter((alg) => gateway.publicKeys.keys.some((key) => key.alg === alg));
  return {
    jwt: {
      issuer: gateway.issuer,
      jwksUri: new URL(gateway.jwksUri),
      algorithms,
      audiences: [resource],
      strictAudience: true,
      clockTolerance: GATEWAY_CLOCK_TOLERANCE_MS,
      requireTyp: true,
      maxLifetime: gateway.accessTokenTtl,
      jwksStaleWindow: 0,
      jwksCooldown: 0,
      fetchTimeout: 1000,
      localKeys: gateway.publicKeys,
    },
    introspection: undefined,
  };
}

/** The issuer the callers of a route come from, when the config names one. */
export function callerIssuer(raw: RawTokens | undefined): string | undefined {
  return raw?.jwt?.issuer ?? raw?.introspection?.issuer;
}

/** The URLs this section fetches, for the https rule (`at` is the route's path). */
export function tokensUrls(raw: RawTokens, at: string): ValueAt[] {
  return [
    [`${at}.tokens.jwt.issuer`, raw.jwt?.issuer],
    [`${at}.tokens.jwt.jwks_uri`, raw.jwt?.jwks_uri],
    [`${at}.tokens.introspection.endpoint`, raw.introspection?.endpoint],
    [`${at}.tokens.introspection.issuer`, raw.introspection?.issuer],
  ];
}

/** The secrets this section holds, for the literal-secret warning (`at` is the route's path). */
export function tokensSecrets(raw: RawTokens, at: string): ValueAt[] {
  return [
    [`${at}.tokens.introspection.client_secret`, raw.introspection?.client_secret],
    [`${at}.tokens.introspection.private_key`, raw.introspection?.private_key],
  ];
}
