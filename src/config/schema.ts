import { z } from 'zod';
import { DURATION_PATTERN, MAX_DURATION_MS, formatDuration, parseDuration } from './duration.js';
import {
  ROUTE_NAME_PATTERN,
  SCOPE_PATTERN,
  bearerTokenProblem,
  headerNameProblem,
  headerValueProblem,
  originProblem,
  redisUrlProblem,
  routePathProblem,
} from './rules.js';
import type { JwtAlgorithm } from './types.js';
import { urlProblem } from './url.js';
import type { UrlRules } from './url.js';

/**
 * The configuration file's schema: the single source of truth for key names, types, defaults and the JSON Schema
 * (scripts/write-schema.ts). Checks that need more than one value (uniqueness, http allowed by
 * `allow_insecure_http`) live in compile.ts.
 */

/** Adapts a `reason | undefined` rule to zod. */
function rule<T>(problem: (value: T) => string | undefined) {
  return (value: T, ctx: z.RefinementCtx) => {
    const message = problem(value);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  };
}

const STRICT_URL: UrlRules = { blockInternalHosts: true, requireNormalForm: true };

/** A URL the gateway advertises or fetches: https (http only per compile.ts), no userinfo/query/fragment. */
function strictUrl(description: string) {
  return z
    .string()
    .superRefine(rule((value: string) => urlProblem(value, STRICT_URL)))
    .meta({ format: 'uri' })
    .describe(description);
}

const MIN_TIMEOUT_MS = 1;

interface DurationLimits {
  readonly min?: number;
  readonly max?: number;
}

function duration(defaultValue: number | string, description: string, limits: DurationLimits = {}) {
  const { min = 0, max = MAX_DURATION_MS } = limits;
  const message = 'must be a number of seconds or a duration like 500ms, 30s, 5m, 1h';
  return z
    .union([
      z.number().nonnegative({ error: message }),
      z.string().regex(DURATION_PATTERN, { error: message }),
    ], { error: message })
    // Both branches are valid durations by now.
    .transform((value) => parseDuration(value) ?? Number.NaN)
    .pipe(
      z
        .number()
        .min(min, { error: `must be at least ${formatDuration(min)}` })
        .max(max, { error: `must be at most ${formatDuration(max)}` }),
    )
    .prefault(defaultValue)
    .describe(`${description} Seconds, or a string like 500ms, 30s, 5m, 1h. Default: ${defaultValue}.`);
}

const scope = z
  .string()
  .regex(SCOPE_PATTERN, { error: 'must be an RFC 6749 scope token: visible ASCII without space, " or \\' });

function scopeList(description: string) {
  return z.array(scope).default([]).describe(`${description} Default: [].`);
}

/** A credential: literal values are allowed but warned about; references are resolved before validation. */
function secret(description: string) {
  return z
    .string()
    .min(1, { error: 'must not be empty' })
    .describe(`${description} A secret: write \${env:NAME} or \${file:/absolute/path}.`);
}

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
  ])
  .prefault({ type: 'none' })
  .describe('Credential the gateway sends upstream (the client token is never forwarded). Default: {type: none}.');

const upstream = z
  .strictObject({
    url: z
      .string()
      .superRefine(rule((value: string) => urlProblem(value, { blockInternalHosts: false, requireNormalForm: false })))
      .meta({ format: 'uri' })
      .describe('MCP endpoint of the upstream server; http is allowed (typically a pod-local service).'),
    auth: upstreamAuth,
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
    jwks_cooldown: duration('30s', 'Minimum time between JWKS refetches triggered by an unknown kid.'),
    fetch_timeout: duration('5s', 'Timeout of one JWKS or metadata request.', { min: MIN_TIMEOUT_MS }),
  })
  .describe('Validate access tokens as JWTs (RFC 9068).');

const introspection = z
  .strictObject({
    endpoint: strictUrl('RFC 7662 introspection endpoint.'),
    client_id: z.string().min(1).describe('Client id the gateway authenticates with.'),
    client_secret: secret('Client secret for the introspection endpoint.').optional(),
    auth_method: z
      .enum(['client_secret_basic', 'client_secret_post'])
      .default('client_secret_basic')
      .describe('How the client authenticates. Default: client_secret_basic.'),
    issuer: strictUrl('Expected `iss` in answers. Default: tokens.jwt.issuer when set.').optional(),
    timeout: duration('3s', 'Timeout of one introspection request.', { min: MIN_TIMEOUT_MS }),
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
    resources: scopeMap('resource URI (resources/read)'),
    prompts: scopeMap('prompt name (prompts/get)'),
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
  })
  .describe('One protected MCP server.');

export const configSchema = z
  .strictObject({
    listen: z
      .strictObject({
        host: z.string().min(1).default('0.0.0.0').describe('Bind address. Default: 0.0.0.0.'),
        port: z.number().int().min(0).max(65535).default(8080).describe('Port. Default: 8080.'),
      })
      .prefault({})
      .describe('Where the gateway listens.'),
    public_url: strictUrl('Public base URL of the gateway: base of resource URIs and metadata URLs.'),
    allow_insecure_http: z
      .boolean()
      .default(false)
      .describe('Allow http:// URLs to non-loopback hosts (development only). Default: false.'),
    log: z
      .strictObject({
        level: z
          .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
          .default('info')
          .describe('Log level. Default: info.'),
      })
      .prefault({})
      .describe('Logging.'),
    limits: z
      .strictObject({
        max_body_bytes: z.number().int().positive().default(1_048_576).describe('Largest POST body. Default: 1048576.'),
        max_token_bytes: z.number().int().positive().default(8192).describe('Longest bearer token. Default: 8192.'),
      })
      .prefault({})
      .describe('Request limits.'),
    cache: z
      .strictObject({
        redis_url: secret('redis:// or rediss:// URL. Default: in-process cache.')
          .superRefine(rule(redisUrlProblem))
          .optional(),
        key_secret: secret('HMAC key for cache keys, at least 32 characters. Required with redis_url.')
          .min(32, { error: 'must be at least 32 characters' })
          .optional(),
        key_prefix: z.string().default('mcpgw:').describe('Prefix of every Redis key. Default: "mcpgw:".'),
      })
      .superRefine((value, ctx) => {
        if (value.redis_url !== undefined && value.key_secret === undefined) {
          ctx.addIssue({ code: 'custom', path: ['key_secret'], message: 'is required when redis_url is set' });
        }
      })
      .prefault({})
      .describe('Shared cache for introspection answers and session bindings.'),
    routes: z.array(route).min(1, { error: 'at least one route is required' }).describe('Protected routes.'),
  })
  .meta({
    title: 'mcp-auth-gateway configuration',
    description: 'Routes, token validation and upstreams of the gateway.',
  });

export type RawConfig = z.output<typeof configSchema>;
