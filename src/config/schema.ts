import { z } from 'zod';
import {
  MIN_TIMEOUT_MS,
  bindHost,
  clientSecretMethod,
  duration,
  hostPortList,
  listenerPort,
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
  hostProblem,
  headerNameProblem,
  headerValueProblem,
  originProblem,
  redisUrlProblem,
  routePathProblem,
} from './rules.js';
import { MEMORY_RECORD_KINDS, type MemoryRecordKind } from './memory-bounds.js';
import { trustedProxyProblem } from './trusted-proxies.js';
import type { JwtAlgorithm } from './types.js';

/**
 * The configuration file's schema: the single source of truth for key names, types, defaults and the JSON Schema
 * (scripts/write-schema.ts); the field builders it shares are in fields.ts. Checks that need more than one value
 * (uniqueness, http allowed by `allow_insecure_http`) live in compile.ts.
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

/** `cache.memory`: one bound per record kind, so one kind's flood never evicts another kind's records. */
const memoryBounds = z
  .strictObject(
    Object.fromEntries(
      Object.entries(MEMORY_RECORD_KINDS).map(([kind, { default: bound, meaning }]) => [
        kind,
        z.number().int().min(100).default(bound).describe(`${meaning} Default: ${bound}.`),
      ]),
    ) as Record<MemoryRecordKind, z.ZodDefault<z.ZodNumber>>,
  )
  .prefault({})
  .describe('Most records the gateway keeps in process, per kind (the least recently used of that kind go first).');

const REDIS_MODES = ['redis_url', 'redis_sentinel', 'redis_cluster'] as const;

/** The proxies the decision listener answers, each describing the request it holds in its own way. */
export const DECISION_PROXIES = ['nginx', 'traefik', 'envoy'] as const;

/** The header carrying `decision.secret` on every question the proxy asks. */
export const DECISION_SECRET_HEADER = 'X-Mcp-Decision-Secret';

function redisTls(description: string) {
  return z.boolean().default(false).describe(`${description} Default: false.`);
}

const redisSentinel = z
  .strictObject({
    name: z.string().min(1).describe('Master group name the sentinels monitor, e.g. mymaster.'),
    sentinels: hostPortList('Sentinels as host:port, e.g. ["sentinel-0.redis:26379"].'),
    password: secret('Password of the Redis data nodes.').optional(),
    sentinel_password: secret('Password of the sentinels.').optional(),
    db: z.number().int().nonnegative().default(0).describe('Database number. Default: 0.'),
    tls: redisTls('TLS to the sentinels and the data nodes.'),
  })
  .describe('Redis behind Sentinel: the current primary is asked from the sentinels and followed across failovers.');

const redisCluster = z
  .strictObject({
    nodes: hostPortList('Seed nodes as host:port, e.g. ["redis-0.redis:6379"]; the rest is discovered.'),
    password: secret('Password of the cluster nodes.').optional(),
    tls: redisTls('TLS to the cluster nodes.'),
  })
  .describe('Redis Cluster: keys spread over the masters by slot; the topology is discovered from the seed nodes.');

export const configSchema = z
  .strictObject({
    listen: z
      .strictObject({
        host: bindHost('0.0.0.0', 'Bind address.'),
        port: listenerPort(8080),
      })
      .prefault({})
      .describe('Where the gateway listens.'),
    admin: z
      .strictObject({
        enabled: z.boolean().default(true).describe('Serve the admin listener. Default: true.'),
        host: bindHost('127.0.0.1', 'Bind address; keep it off public interfaces (metrics are unauthenticated).'),
        port: listenerPort(9090),
      })
      .prefault({})
      .describe('Admin listener: /metrics (Prometheus), /healthz, /readyz. Never served on the main listener.'),
    decision: z
      .strictObject({
        proxy: z
          .enum(DECISION_PROXIES, { error: `must be one of ${DECISION_PROXIES.join(', ')}: the proxy that asks (its headers alone describe the request)` })
          .describe(
            'Which proxy asks: nginx (auth_request: X-Original-URI / X-Original-Method), traefik (forwardAuth: X-Forwarded-Uri / X-Forwarded-Method / X-Forwarded-Host) or envoy (ext_authz HTTP service: the request itself under path_prefix). Only that proxy\'s description of the request is read; a question that also carries another proxy\'s description is refused (400). Required.',
          ),
        secret: secret(
          `Shared secret the proxy sends in the ${DECISION_SECRET_HEADER} header of every question, at least 32 characters: the listener answers no one else (a valid client token would otherwise buy a route's upstream credential from anyone who reaches the port). Required unless unauthenticated: true.`,
        )
          .min(32, { error: 'must be at least 32 characters' })
          .optional(),
        unauthenticated: z
          .boolean()
          .default(false)
          .describe('Answer questions without the shared secret (only when nothing but the proxy can reach the listener, e.g. a Unix-socket-like loopback sidecar). Default: false.'),
        host: bindHost('127.0.0.1', 'Bind address; only the proxy asking (nginx, Envoy, Traefik) may reach it.'),
        port: listenerPort(8181),
        path_prefix: z
          .string()
          .regex(/^(\/[A-Za-z0-9\-._~]+)*$/, { error: 'must be empty or start with "/" and not end with "/"' })
          .default('')
          .describe('Envoy ext_authz: the prefix Envoy puts before the original path (its path_prefix). Default: "".'),
      })
      .superRefine((value, ctx) => {
        if (value.secret === undefined && !value.unauthenticated) {
          ctx.addIssue({ code: 'custom', path: ['secret'], message: 'is required (or set unauthenticated: true to answer any caller that reaches the listener)' });
        }
        if (value.secret !== undefined && value.unauthenticated) {
          ctx.addIssue({ code: 'custom', path: ['unauthenticated'], message: 'contradicts secret: set one of them' });
        }
      })
      .optional()
      .describe('Decision listener: answers nginx auth_request, Traefik forwardAuth and Envoy ext_authz (HTTP) with the proxy\'s verdicts. Off unless set.'),
    shutdown: z
      .strictObject({
        grace_period: duration(
          '20s',
          'After SIGTERM/SIGINT: how long in-flight requests may take before remaining connections are cut.',
          { max: 600_000 },
        ),
      })
      .prefault({})
      .describe('Graceful shutdown.'),
    public_url: strictUrl('Public base URL of the gateway: base of resource URIs and metadata URLs.'),
    allowed_hosts: z
      .array(z.string().min(1).superRefine(rule(hostProblem)))
      .default([])
      .describe(
        'Host header values (name, or name:port) MCP endpoints answer; others get 403 (DNS rebinding protection). Default: [] (any Host; with a loopback public_url, loopback names only).',
      ),
    trusted_proxies: z
      .array(z.string().superRefine(rule(trustedProxyProblem)))
      .default([])
      .describe(
        'Peers (IP addresses or CIDR blocks) whose X-Forwarded-For and X-Forwarded-Host the gateway believes, on the main and the decision listener: an ingress or proxy in front that overwrites them. From any other peer those headers are ignored (the Host header and the peer address count). Default: [] (nobody).',
      ),
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
        audit_subject: z
          .enum(['clear', 'hashed'])
          .default('clear')
          .describe(
            'How audit lines name the caller: clear (<issuer>#<subject>) or hashed (a keyed digest, HMAC with cache.key_secret, equal to the grant audit lines\' principal digest; stable across replicas sharing that secret). Default: clear.',
          ),
      })
      .prefault({})
      .describe('Logging.'),
    limits: z
      .strictObject({
        max_body_bytes: z.number().int().positive().default(1_048_576).describe('Largest POST body. Default: 1048576.'),
        max_token_bytes: z.number().int().positive().default(8192).describe('Longest bearer token. Default: 8192.'),
        body_timeout: duration(
          '30s',
          'Longest time to receive a whole request, headers and body (then 408 and the connection is closed). Streams the gateway sends are not limited by it.',
          { min: 1_000, max: 600_000 },
        ),
        header_timeout: duration('10s', 'Longest time to receive the request headers; at most body_timeout.', { min: 1_000, max: 600_000 }),
        max_streams_per_principal: z
          .number()
          .int()
          .positive()
          .default(64)
          .describe('Standalone SSE streams (GET) one user (issuer and subject, through every client; a client without a subject on its own) may hold open on this gateway process; beyond: 429. POSTs, streamed answers included, count against max_concurrent_requests_per_principal instead. Default: 64.'),
        max_concurrent_requests_per_principal: z
          .number()
          .int()
          .positive()
          .default(256)
          .describe('POST and DELETE requests one user (counted like max_streams_per_principal) may have in flight at the upstream on this gateway process, an answer streamed as SSE until it ends; beyond: 429. Default: 256.'),
      })
      .superRefine((value, ctx) => {
        if (value.header_timeout > value.body_timeout) {
          ctx.addIssue({ code: 'custom', path: ['header_timeout'], message: 'must not be longer than body_timeout' });
        }
      })
      .prefault({})
      .describe('Request limits.'),
    cache: z
      .strictObject({
        redis_url: secret('redis:// or rediss:// URL of one Redis server. Default: in-process cache.')
          .superRefine(rule(redisUrlProblem))
          .optional(),
        redis_sentinel: redisSentinel.optional(),
        redis_cluster: redisCluster.optional(),
        key_secret: secret('HMAC key for cache keys, at least 32 characters. Required with any Redis mode.')
          .min(32, { error: 'must be at least 32 characters' })
          .optional(),
        key_prefix: z.string().default('mcpgw:').describe('Prefix of every Redis key. Default: "mcpgw:".'),
        command_timeout: duration(
          '150ms',
          'Longest wait for one Redis command before it counts as a miss (introspection then asks the authorization server; a session this replica has seen is still served).',
          { min: 10, max: 10_000 },
        ),
        memory: memoryBounds,
      })
      .superRefine((value, ctx) => {
        const modes = REDIS_MODES.filter((mode) => value[mode] !== undefined);
        if (modes.length > 1) {
          ctx.addIssue({ code: 'custom', message: `set only one of ${REDIS_MODES.join(', ')}` });
        }
        const [mode] = modes;
        if (mode !== undefined && value.key_secret === undefined) {
          ctx.addIssue({ code: 'custom', path: ['key_secret'], message: `is required when ${mode} is set` });
        }
      })
      .prefault({})
      .describe(
        'Shared cache for introspection answers and session bindings: at most one of redis_url, redis_sentinel, redis_cluster.',
      ),
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
    signing_key: privateKey(
      'EC P-256 key signing identity assertions (upstream.identity). Default: a key generated per process (one warning).',
      'ES256',
    ).optional(),
  })
  .meta({
    title: 'mcp-auth-gateway configuration',
    description: 'Routes, token validation and upstreams of the gateway.',
  });

export type RawConfig = z.output<typeof configSchema>;
