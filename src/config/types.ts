import type { Secret } from './secret.js';
import type { AdminSettings } from './sections/admin.js';
import type { AuthorizationServerSettings } from './sections/authorization-server.js';
import type { CacheSettings } from './sections/cache.js';
import type { ConsentSettings } from './sections/consent.js';
import type { DecisionListenerSettings } from './sections/decision.js';
import type { LimitSettings } from './sections/limits.js';
import type { ListenSettings } from './sections/listen.js';
import type { LogSettings } from './sections/log.js';
import type { HostPolicy } from './sections/public-url.js';
import type { CompiledRoute } from './sections/routes/route.js';
import type { ShutdownSettings } from './sections/shutdown.js';
import type { TelemetrySettings } from './sections/telemetry.js';
import type { TrustedProxies } from './trusted-proxies.js';

/**
 * The compiled configuration every other folder reads. Each section's settings type is defined next to its schema
 * and compile step (sections/) and re-exported here, so importers need only this module.
 */

export type { Milliseconds } from './duration.js';
export type { AdminSettings } from './sections/admin.js';
export type { AuthorizationServerSettings, ClaimCondition, Entitlement, PreRegisteredClient } from './sections/authorization-server.js';
export type { CacheSettings, HostPort, RedisConnection } from './sections/cache.js';
export type { ConsentSettings } from './sections/consent.js';
export type { DecisionListenerSettings, DecisionProxy } from './sections/decision.js';
export type { LimitSettings } from './sections/limits.js';
export type { ListenSettings } from './sections/listen.js';
export type { LogSettings } from './sections/log.js';
export type { AuthorizationCodeClient, TokenEndpointClientAuth, TokenEndpointSettings } from './sections/oauth-clients.js';
export type { HostPolicy } from './sections/public-url.js';
export type { CorsSettings } from './sections/routes/cors.js';
export type { DpopAlgorithm, DpopMode, DpopSettings } from './sections/routes/dpop.js';
export type { IdentitySettings } from './sections/routes/identity.js';
export type { PolicySettings } from './sections/routes/policy.js';
export type { RateLimitSettings } from './sections/routes/rate-limit.js';
export type { CompiledRoute } from './sections/routes/route.js';
export type { SessionSettings } from './sections/routes/sessions.js';
export type { IntrospectionAuthMethod, IntrospectionSettings, JwtAlgorithm, JwtSettings, TokenSettings } from './sections/routes/tokens.js';
export type { UpstreamAuth, UserOAuthSettings } from './sections/routes/upstream-auth.js';
export type { UpstreamSettings } from './sections/routes/upstream.js';
export type { ShutdownSettings } from './sections/shutdown.js';
export type { TelemetrySettings, TracesSettings } from './sections/telemetry.js';

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
  /** The gateway as the authorization server of the routes without `tokens`; absent unless configured. */
  readonly authorizationServer: AuthorizationServerSettings | undefined;
  readonly limits: LimitSettings;
  /** Private key (JWK or PEM text, EC P-256) signing identity assertions; absent → generated per process. */
  readonly signingKey: Secret | undefined;
  readonly logLevel: LogSettings['logLevel'];
  /** How audit lines name the caller (`log.audit_subject`). */
  readonly auditSubject: LogSettings['auditSubject'];
  /** OpenTelemetry traces (`telemetry.traces`); set up at start, a reload does not change them. */
  readonly telemetry: TelemetrySettings;
  /** Non-fatal findings (e.g. a policy scope absent from scopes_supported), printed by check-config and at start. */
  readonly warnings: readonly string[];
}
