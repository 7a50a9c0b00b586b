import type { Secret } from './secret.js';

/** Durations in the compiled config are always milliseconds. */
export type Milliseconds = number;

export type UpstreamAuth =
  | { readonly type: 'none' }
  | { readonly type: 'bearer'; readonly token: Secret }
  | { readonly type: 'header'; readonly name: string; readonly value: Secret };

export interface UpstreamSettings {
  readonly url: URL;
  readonly auth: UpstreamAuth;
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
  /** Minimum time between JWKS refetches triggered by an unknown `kid`. */
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
}

export interface CacheSettings {
  /** Absent → in-process LRU cache. */
  readonly redisUrl: Secret | undefined;
  /** HMAC key for cache keys; required with Redis, random per process otherwise. */
  readonly keySecret: Secret | undefined;
  readonly keyPrefix: string;
}

export interface LimitSettings {
  /** Largest accepted POST body; larger → 413. */
  readonly maxBodyBytes: number;
  /** Longest accepted bearer token; longer → 401 invalid_token without decoding. */
  readonly maxTokenBytes: number;
}

export interface CompiledConfig {
  readonly listen: { readonly host: string; readonly port: number };
  readonly publicUrl: URL;
  readonly allowInsecureHttp: boolean;
  readonly routes: readonly CompiledRoute[];
  /** Lookup by normalised request path. */
  readonly routesByPath: ReadonlyMap<string, CompiledRoute>;
  /** Lookup by PRM path (shape A, plus shape B `/.well-known/oauth-protected-resource` when applicable). */
  readonly routesByMetadataPath: ReadonlyMap<string, CompiledRoute>;
  readonly cache: CacheSettings;
  readonly limits: LimitSettings;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Non-fatal findings (e.g. a policy scope absent from scopes_supported), printed by check-config and at start. */
  readonly warnings: readonly string[];
}
