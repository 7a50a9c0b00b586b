import { z } from 'zod';
import {
  MIN_TIMEOUT_MS,
  clientSecretMethod,
  duration,
  privateKey,
  rule,
  scope,
  scopeList,
  scopeListOrString,
  secret,
  strictUrl,
  upstreamUrl,
} from './fields.js';
import {
  ROUTE_NAME_PATTERN,
  bearerTokenProblem,
  forwardedHeaderProblem,
  headerNameProblem,
  headerValueProblem,
  originProblem,
  routePathProblem,
} from './rules.js';
import { adminSchema } from './sections/admin.js';
import { cacheSchema } from './sections/cache.js';
import { decisionSchema } from './sections/decision.js';
import { limitsSchema } from './sections/limits.js';
import { listenSchema } from './sections/listen.js';
import { logSchema } from './sections/log.js';
import { publicUrlKeys } from './sections/public-url.js';
import { shutdownSchema } from './sections/shutdown.js';
import { signingKeySchema } from './sections/signing-key.js';
import type { JwtAlgorithm } from './types.js';

export { DECISION_PROXIES, DECISION_SECRET_HEADER } from './sections/decision.js';

/**
 * The configuration file's schema: the single source of truth for key names, types, defaults and the JSON Schema
 * (scripts/write-schema.ts). Each top-level section is defined in sections/<section>.ts, the field builders they
 * share in fields.ts. Checks that need more than one value (uniqueness, http allowed by `allow_insecure_http`) run
 * when the config is compiled (compile.ts).
 */

/** The upstream's RFC 8707 resource indicator: any absolute http(s) URI (upstreams may be pod-local). */
const resourceIndicator = upstreamUrl()
  .optional()
  .describe('RFC 8707 resource indicator of the upstream (sent as `resource`).');

/**
 * How the gateway authenticates itself at the upstream's token endpoint: `client_secret` (basic or post) or
 * `private_key` (RFC 7523 private_key_jwt), exactly one.
 */
const tokenEndpointClient = {
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

function oneClientCredential(value: { client_secret?: string; private_key?: string }, ctx: z.RefinementCtx): void {
  if ((value.client_secret === undefined) === (value.private_key === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['client_secret'], message: 'exactly one of client_secret or private_key is required' });
  }
}

const clientCredentialsAuth = z
  .strictObject({ type: z.literal('client_credentials'), ...tokenEndpointClient })
  .superRefine(oneClientCredential)
  .describe('OAuth client_credentials grant; the token is cached until shortly before it expires.');

const tokenExchangeAuth = z
  .strictObject({ type: z.literal('token_exchange'), ...tokenEndpointClient })
  .superRefine(oneClientCredential)
  .describe(
    "RFC 8693 token exchange: the caller's token is sent only to token_endpoint as subject_token; the result is cached per caller and scope set.",
  );

/** A client of an OAuth authorization server reached through its metadata (user_oauth, consent.login). */
const authorizationCodeClient = {
  client_id: z.string().min(1).describe('Client id of the gateway at that authorization server.'),
  client_secret: secret('Client secret; without it the gateway is a public client (PKCE only).').optional(),
  auth_method: clientSecretMethod('How client_secret is sent. Default: client_secret_basic.'),
  timeout: duration('5s', 'Timeout of one request to that authorization server.', { min: MIN_TIMEOUT_MS }),
};

/** Longest a user's grant may be kept: a year (the store, not a timer, holds it). */
const MAX_GRANT_TTL_MS = 8_760 * 3_600_000;

const userOAuthAuth = z
  .strictObject({
    type: z.literal('user_oauth'),
    issuer: strictUrl("Issuer of the upstream's own authorization server; its metadata is discovered (RFC 8414, then OpenID Connect)."),
    ...authorizationCodeClient,
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

const upstreamAuth = z
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

const identity = z
  .strictObject({
    header: z
      .string()
      .superRefine(rule(headerNameProblem))
      .describe('Request header carrying the assertion, e.g. X-Gateway-Identity. A client-sent copy is never forwarded.'),
    ttl: duration('60s', 'Lifetime of one assertion (never beyond the caller token).', { min: 1_000, max: 3_600_000 }),
    audience: z
      .string()
      .min(1)
      .optional()
      .describe('`aud` of the assertion. Default: the origin of upstream.url.'),
  })
  .describe(
    "A short-lived ES256 JWT about the caller (sub, client_id, scope), signed with signing_key and published at /.well-known/jwks.json, so the upstream knows who calls without seeing the caller's token.",
  );

const upstream = z
  .strictObject({
    url: upstreamUrl().describe('MCP endpoint of the upstream server; http is allowed (typically a pod-local service).'),
    auth: upstreamAuth,
    identity: identity.optional(),
    validates_mirrored_headers: z
      .boolean()
      .default(false)
      .describe(
        'The upstream refuses a request whose Mcp-Method / Mcp-Name headers contradict its body (MCP 2026-07-28 servers must). Only then may a door that sees no body (the decision listener behind nginx auth_request or Traefik without forwardBody) decide a per-tool/resource/prompt policy from those headers; otherwise such a request passes only with every scope the route names, else 400. Default: false.',
      ),
    forward_headers: z
      .array(z.string().superRefine(rule(forwardedHeaderProblem)))
      .default([])
      .describe(
        'Client request headers forwarded to the upstream on top of the built-in allowlist (README: "Headers the upstream receives"), e.g. [X-MCP-Toolsets]. Values come from the client unverified. Default: [].',
      ),
    timeouts: z
      .strictObject({
        connect: duration('5s', 'Time to establish the TCP/TLS connection.', { min: MIN_TIMEOUT_MS }),
        headers: duration('30s', 'Time until response headers arrive (then 504).', { min: MIN_TIMEOUT_MS }),
        body_idle: duration(0, 'Longest silence on a response body; 0 disables it (SSE streams may idle long).'),
      })
      .prefault({})
      .describe('Upstream timeouts.'),
  })
  .describe('Where requests go after authorization.');

const JWT_ALGORITHMS = [
  'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
] as const satisfies readonly JwtAlgorithm[];

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
    audience: z.string().min(1).optional().describe('Expected `aud`. Default: the route resource.'),
    strict_audience: z.boolean().default(false).describe('Require `aud` to be exactly the audience. Default: false.'),
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
    auth_method: clientSecretMethod('How the client authenticates. Default: client_secret_basic.'),
    issuer: strictUrl('Expected `iss` in answers. Default: tokens.jwt.issuer when set.').optional(),
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
  .describe('Validate access tokens by RFC 7662 introspection.');

const tokens = z
  .strictObject({ jwt: jwt.optional(), introspection: introspection.optional() })
  .refine((value) => value.jwt !== undefined || value.introspection !== undefined, {
    error: 'at least one of jwt or introspection is required',
  })
  .describe('How access tokens are validated: jwt, introspection, or both.');

const scopeMap = (what: string) =>
  z.record(z.string().min(1), z.array(scope)).default({}).describe(`Extra scopes per ${what}. Default: {}.`);

const policy = z
  .strictObject({
    scopes: scopeList('Scopes needed for anything on this route.'),
    tools: scopeMap('tool name (tools/call)'),
    methods: scopeMap('JSON-RPC method'),
    resources: scopeMap(
      'resource URI (resources/read, resources/subscribe, resources/unsubscribe, completion/complete of a ref/resource); keys are exact URIs (a URI template is refused) and are compared with requested URIs in their normal form, which has no userinfo, query or fragment (README: "Which spellings a resource policy covers")',
    ),
    prompts: scopeMap('prompt name (prompts/get, completion/complete of a ref/prompt)'),
    hide_unauthorized: z
      .boolean()
      .default(false)
      .describe('Remove tools, resources and prompts the caller lacks scopes for from list results. Default: false.'),
    implies: z
      .record(scope, z.array(scope))
      .default({})
      .describe('Scope hierarchy, e.g. {"calc:admin": [calc:write]}: a granted key also grants its values (transitively). Default: {}.'),
    upfront_scopes: z
      .boolean()
      .default(false)
      .describe(
        'The first 401 challenge (and scopes_supported) names every scope an operation on this route can require, ' +
          'the broadest of an `implies` chain only, so a client that cannot step up gets everything at its first ' +
          'authorization. Default: false (the challenge names the route scopes; an operation that needs more answers ' +
          '403 insufficient_scope).',
      ),
  })
  .prefault({})
  .describe('Scopes required on top of a valid token.');

const cors = z
  .strictObject({
    allowed_origins: z
      .array(z.string().superRefine(rule((value: string) => (value === '*' ? undefined : originProblem(value)))))
      .min(1)
      .default(['*'])
      .superRefine(rule((origins: string[]) =>
        origins.includes('*') && origins.length > 1 ? 'must be exactly ["*"] or a list of origins' : undefined,
      ))
      .describe('["*"] or origins like https://app.example.com. Default: ["*"].'),
    max_age: z.number().int().nonnegative().default(600).describe('Preflight cache, seconds. Default: 600.'),
  })
  .prefault({})
  .describe('Browser access (CORS).');

const sessions = z
  .strictObject({
    bind: z
      .boolean()
      .default(true)
      .describe('Bind each Mcp-Session-Id to the principal (issuer, subject, client id) that opened it. Default: true.'),
    idle_ttl: duration('30m', 'A binding unused this long expires; its session id is then refused.', { min: 1_000 }),
  })
  .prefault({})
  .describe('MCP session binding.');

const rateLimit = z
  .strictObject({
    requests: z.number().int().positive().describe('Requests allowed per principal per period (token bucket size).'),
    per: duration('1m', 'The period in which `requests` are refilled.', { min: 1_000 }),
  })
  .describe('Per-principal rate limit (token bucket). Default: none.');

const route = z
  .strictObject({
    name: z
      .string()
      .regex(ROUTE_NAME_PATTERN, { error: 'must match ^[a-z0-9][a-z0-9_-]{0,62}$' })
      .describe('Unique route name (logs, metrics).'),
    path: z
      .string()
      .superRefine(rule(routePathProblem))
      .describe('Exact request path, e.g. /calc/mcp; already normal (no trailing slash, no dot segments).'),
    resource: strictUrl('Canonical resource URI (PRM `resource`, token audience). Default: public_url + path.')
      .optional(),
    default: z
      .boolean()
      .default(false)
      .describe('Also serve this route\'s metadata at /.well-known/oauth-protected-resource. Default: false.'),
    resource_name: z.string().min(1).optional().describe('Human-readable name in the metadata document.'),
    resource_documentation: strictUrl('Documentation URL in the metadata document.').optional(),
    upstream,
    authorization_servers: z
      .array(strictUrl('Authorization server issuer URL.'))
      .min(1, { error: 'at least one authorization server is required' })
      .describe('Authorization servers advertised in the metadata document.'),
    scopes_supported: z
      .array(scope.refine((value) => value !== 'offline_access', {
        error: 'offline_access must not be advertised by a protected resource',
      }))
      .default([])
      .describe('Scopes advertised in the metadata document. Default: [].'),
    tokens,
    policy,
    cors,
    sessions,
    rate_limit: rateLimit.optional(),
  })
  .describe('One protected MCP server.');

export const configSchema = z
  .strictObject({
    listen: listenSchema,
    admin: adminSchema,
    decision: decisionSchema,
    shutdown: shutdownSchema,
    ...publicUrlKeys,
    log: logSchema,
    limits: limitsSchema,
    cache: cacheSchema,
    consent: z
      .strictObject({
        login: z
          .strictObject({
            issuer: strictUrl(
              "Where the person at the browser signs in (OpenID Connect). Default: the user_oauth routes' tokens.jwt.issuer.",
            ).optional(),
            ...authorizationCodeClient,
          })
          .describe("The gateway's OpenID Connect client at its own authorization server."),
        link_ttl: duration('10m', 'Lifetime of a consent link (single use).', { min: 30_000, max: 600_000 }),
      })
      .optional()
      .describe(
        'The gateway\'s consent pages (under /consent/) for upstream.auth.type user_oauth: who opens a consent link must sign in as the caller it was made for.',
      ),
    routes: z.array(route).min(1, { error: 'at least one route is required' }).describe('Protected routes.'),
    signing_key: signingKeySchema,
  })
  .meta({
    title: 'mcp-auth-gateway configuration',
    description: 'Routes, token validation and upstreams of the gateway.',
  });

export type RawConfig = z.output<typeof configSchema>;
