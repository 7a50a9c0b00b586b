import type { Milliseconds } from './duration.js';
import type { Secret } from './secret.js';
import type { AdminSettings } from './sections/admin.js';
import type { CacheSettings } from './sections/cache.js';
import type { DecisionListenerSettings } from './sections/decision.js';
import type { LimitSettings } from './sections/limits.js';
import type { ListenSettings } from './sections/listen.js';
import type { LogSettings } from './sections/log.js';
import type { HostPolicy } from './sections/public-url.js';
import type { ShutdownSettings } from './sections/shutdown.js';
import type { TrustedProxies } from './trusted-proxies.js';

/**
 * The compiled configuration every other folder reads. The settings types of the top-level sections are defined
 * next to their schema and compile step (sections/) and re-exported here, so importers need only this module.
 */

export type { Milliseconds } from './duration.js';
export type { AdminSettings } from './sections/admin.js';
export type { CacheSettings, HostPort, RedisConnection } from './sections/cache.js';
export type { DecisionListenerSettings, DecisionProxy } from './sections/decision.js';
export type { LimitSettings } from './sections/limits.js';
export type { ListenSettings } from './sections/listen.js';
export type { LogSettings } from './sections/log.js';
export type { HostPolicy } from './sections/public-url.js';
export type { ShutdownSettings } from './sections/shutdown.js';

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

/** The gateway's consent pages (user_oauth): who opens a consent link signs in at `login.issuer` first. */
export interface ConsentSettings {
  /** The gateway's OpenID Connect client; its issuer is the one the user_oauth routes' callers come from. */
  readonly login: AuthorizationCodeClient;
  /** Lifetime of a consent link (at most 10 minutes). */
  readonly linkTtl: Milliseconds;
}

/** A gateway-signed JWT about the caller, sent upstream in `header`. */
export interface IdentitySettings {
  /** Lowercase header name. */
  readonly header: string;
  readonly ttl: Milliseconds;
  /** `aud` of the assertion: configured, else the upstream URL's origin. */
  readonly audience: string;
}

export interface UpstreamSettings {
  readonly url: URL;
  readonly auth: UpstreamAuth;
  /** Identity assertion sent upstream; absent → none. */
  readonly identity: IdentitySettings | undefined;
  /** Client headers forwarded beyond the built-in allowlist, lowercase. */
  readonly forwardHeaders: ReadonlySet<string>;
  /** The upstream refuses Mcp-Method / Mcp-Name headers that contradict the body: a body-less door may decide by them. */
  readonly validatesMirroredHeaders: boolean;
  /** Time to establish the TCP/TLS connection. */
  readonly connectTimeout: Milliseconds;
  /** Time from sending the request to receiving response headers (→ 504). */
  readonly headersTimeout: Milliseconds;
  /** Longest silence allowed on a response body; 0 disables it (long-lived SSE streams). */
  readonly bodyIdleTimeout: Milliseconds;
}

export type JwtAlgorithm =
  | 'RS256' | 'RS384' | 'RS512'
  | 'PS256' | 'PS384' | 'PS512'
  | 'ES256' | 'ES384' | 'ES512'
  | 'EdDSA' | 'Ed25519';

export interface JwtSettings {
  readonly issuer: string;
  /** Explicit JWKS URL; absent → discovered from the issuer's metadata (RFC 8414, then OpenID Connect). */
  readonly jwksUri: URL | undefined;
  readonly algorithms: readonly JwtAlgorithm[];
  /** Expected `aud`; the route's resource unless overridden. */
  readonly audience: string;
  /** `true` → `aud` must be exactly this resource (a single-valued array counts); `false` → membership. */
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
}

export type IntrospectionAuthMethod = 'client_secret_basic' | 'client_secret_post';

export interface IntrospectionSettings {
  readonly endpoint: URL;
  readonly clientId: string;
  readonly clientSecret: Secret | undefined;
  readonly authMethod: IntrospectionAuthMethod;
  /** Expected `iss` in introspection answers, when set (defaults to the route's jwt issuer if any). */
  readonly issuer: string | undefined;
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

/** Extra scopes per JSON-RPC operation, on top of `PolicySettings.scopes`. Keys are exact names / URIs. */
export interface PolicySettings {
  readonly scopes: readonly string[];
  readonly tools: ReadonlyMap<string, readonly string[]>;
  readonly methods: ReadonlyMap<string, readonly string[]>;
  readonly resources: ReadonlyMap<string, readonly string[]>;
  readonly prompts: ReadonlyMap<string, readonly string[]>;
  /** Remove list entries (tools, resources, prompts) the caller lacks scopes for. */
  readonly hideUnauthorized: boolean;
  /** Scope → every scope it grants besides itself, already transitive (cycles resolved). */
  readonly implies: ReadonlyMap<string, readonly string[]>;
  /**
   * With `upfront_scopes`: every scope an operation on the route can require, none implied by another listed one
   * (route scopes first, then methods, tools, prompts, resources). Undefined when off.
   */
  readonly upfrontScopes?: readonly string[] | undefined;
}

export interface SessionSettings {
  /** Bind Mcp-Session-Id to the principal that opened the session. */
  readonly bind: boolean;
  /** A binding unused this long expires. */
  readonly idleTtl: Milliseconds;
}

/** Token bucket per principal: `requests` tokens, refilled evenly over `per`. */
export interface RateLimitSettings {
  readonly requests: number;
  readonly per: Milliseconds;
}

export interface CorsSettings {
  /** `true` when `allowed_origins` is `["*"]` (the default): any Origin may call, tokens are not ambient. */
  readonly anyOrigin: boolean;
  /** Exact origins (`scheme://host[:port]`, lowercase) allowed when `anyOrigin` is false. */
  readonly allowedOrigins: ReadonlySet<string>;
  readonly maxAge: number;
}

export interface CompiledRoute {
  readonly name: string;
  /** Normalised request path the route answers, e.g. `/calc/mcp`. */
  readonly path: string;
  /** Canonical resource URI: PRM `resource`, expected audience, base of the challenge. */
  readonly resource: string;
  /** Absolute path of the route's PRM document, e.g. `/.well-known/oauth-protected-resource/calc/mcp`. */
  readonly metadataPath: string;
  /** Absolute URL of the PRM document, the `resource_metadata` challenge parameter. */
  readonly metadataUrl: string;
  readonly isDefault: boolean;
  readonly upstream: UpstreamSettings;
  readonly authorizationServers: readonly string[];
  readonly scopesSupported: readonly string[];
  readonly resourceName: string | undefined;
  readonly resourceDocumentation: string | undefined;
  readonly tokens: TokenSettings;
  readonly policy: PolicySettings;
  readonly cors: CorsSettings;
  readonly sessions: SessionSettings;
  /** Absent → no rate limit. */
  readonly rateLimit: RateLimitSettings | undefined;
}

export interface CompiledConfig {
  readonly listen: ListenSettings;
  readonly admin: AdminSettings;
  /** Absent unless `decision` is configured. */
  readonly decision: DecisionListenerSettings | undefined;
  readonly shutdown: ShutdownSettings;
  readonly publicUrl: URL;
  readonly allowInsecureHttp: boolean;
  /** Which Host (and, for local gateways, Origin) values may reach MCP endpoints (DNS rebinding protection). */
  readonly hosts: HostPolicy;
  /** Peers whose X-Forwarded-For / X-Forwarded-Host count (`trusted_proxies`). */
  readonly trustedProxies: TrustedProxies;
  readonly routes: readonly CompiledRoute[];
  /** Lookup by normalised request path. */
  readonly routesByPath: ReadonlyMap<string, CompiledRoute>;
  /** Lookup by PRM path (shape A, plus shape B `/.well-known/oauth-protected-resource` when applicable). */
  readonly routesByMetadataPath: ReadonlyMap<string, CompiledRoute>;
  readonly cache: CacheSettings;
  /** Present when a route uses `user_oauth`. */
  readonly consent: ConsentSettings | undefined;
  readonly limits: LimitSettings;
  /** Private key (JWK or PEM text, EC P-256) signing identity assertions; absent → generated per process. */
  readonly signingKey: Secret | undefined;
  readonly logLevel: LogSettings['logLevel'];
  /** How audit lines name the caller (`log.audit_subject`). */
  readonly auditSubject: LogSettings['auditSubject'];
  /** Non-fatal findings (e.g. a policy scope absent from scopes_supported), printed by check-config and at start. */
  readonly warnings: readonly string[];
}
