import { z } from 'zod';
import { rule, scope, strictUrl } from '../../fields.js';
import type { Findings, ValueAt } from '../../problem.js';
import { ROUTE_NAME_PATTERN, routePathProblem } from '../../rules.js';
import { compileCors, corsSchema, type CorsSettings } from './cors.js';
import { compileDpop, dpopSchema, type DpopSettings } from './dpop.js';
import { compilePolicy, policySchema, type PolicySettings } from './policy.js';
import { compileRateLimit, rateLimitSchema, type RateLimitSettings } from './rate-limit.js';
import { compileSessions, sessionsSchema, type SessionSettings } from './sessions.js';
import { compileTokens, gatewayIssuedTokens, tokensSchema, tokensSecrets, tokensUrls, type GatewayIssuer, type TokenSettings } from './tokens.js';
import { upstreamAuthSecrets, upstreamAuthUrls } from './upstream-auth.js';
import { compileUpstream, upstreamSchema, type UpstreamSettings } from './upstream.js';

/** `routes[]`: one protected MCP server, its metadata document (RFC 9728) and the rules in front of it. */

/** RFC 9728 §3.1: the PRM path is this prefix followed by the resource's path. */
export const WELL_KNOWN_PRM = '/.well-known/oauth-protected-resource';

/** RFC 9728 §3.1 PRM path: well-known prefix + resource path, a terminating slash removed. */
export function metadataPathOf(resource: string): string {
  return WELL_KNOWN_PRM + new URL(resource).pathname.replace(/\/$/, '');
}

export const routeSchema = z
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
    upstream: upstreamSchema,
    authorization_servers: z
      .array(strictUrl('Authorization server issuer URL.'))
      .min(1, { error: 'at least one authorization server is required' })
      .optional()
      .describe(
        "Authorization servers advertised in the metadata document. Required with tokens; without tokens: the gateway's own (authorization_server.issuer).",
      ),
    scopes_supported: z
      .array(scope.refine((value) => value !== 'offline_access', {
        error: 'offline_access must not be advertised by a protected resource',
      }))
      .default([])
      .describe('Scopes advertised in the metadata document. Default: [].'),
    tokens: tokensSchema
      .optional()
      .describe(
        "How access tokens are validated: jwt, introspection, or both. Absent: the gateway's own authorization_server issues them (JWT, aud = the route's resource).",
      ),
    dpop: dpopSchema,
    policy: policySchema,
    cors: corsSchema,
    sessions: sessionsSchema,
    rate_limit: rateLimitSchema.optional(),
  })
  .describe('One protected MCP server.');

export type RawRoute = z.output<typeof routeSchema>;

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
  /** No `tokens` block: the gateway's own authorization server issues this route's tokens. */
  readonly usesGatewayAuthorizationServer: boolean;
  readonly scopesSupported: readonly string[];
  readonly resourceName: string | undefined;
  readonly resourceDocumentation: string | undefined;
  readonly tokens: TokenSettings;
  readonly dpop: DpopSettings;
  readonly policy: PolicySettings;
  readonly cors: CorsSettings;
  readonly sessions: SessionSettings;
  /** Absent → no rate limit. */
  readonly rateLimit: RateLimitSettings | undefined;
}

/** A route before the route table chooses the shape-B (default) route. */
export type PartialRoute = Omit<CompiledRoute, 'isDefault'>;

/** One route compiled, with what its sub-sections found (the route table lists those by check across routes). */
export interface RouteParts {
  readonly settings: PartialRoute;
  readonly findings: { readonly upstream: Findings; readonly policy: Findings };
}

/**
 * `publicBase` is public_url without its trailing slash; `gatewayIssuer` the gateway's own authorization server
 * (cross-section.ts has refused a route without `tokens` when there is none).
 */
export function compileRoute(raw: RawRoute, index: number, publicBase: string, gatewayIssuer?: GatewayIssuer): RouteParts {
  const at = `routes.${index}`;
  const resource = raw.resource ?? publicBase + raw.path;
  const metadataPath = metadataPathOf(resource);
  const upstream = compileUpstream(raw.upstream, at);
  const policy = compilePolicy(raw.policy, at, raw.scopes_supported);
  const settings: PartialRoute = {
    name: raw.name,
    path: raw.path,
    resource,
    metadataPath,
    // The PRM is served by the gateway, so its URL is on the public origin even when `resource` is elsewhere.
    metadataUrl: new URL(publicBase).origin + metadataPath,
    upstream: upstream.settings,
    authorizationServers: raw.authorization_servers ?? (gatewayIssuer ? [gatewayIssuer.issuer] : []),
    usesGatewayAuthorizationServer: raw.tokens === undefined,
    scopesSupported: raw.scopes_supported,
    resourceName: raw.resource_name,
    resourceDocumentation: raw.resource_documentation,
    tokens:
      raw.tokens === undefined
        ? gatewayIssuer === undefined
          ? { jwt: undefined, introspection: undefined }
          : gatewayIssuedTokens(gatewayIssuer, resource)
        : compileTokens(raw.tokens, resource),
    dpop: compileDpop(raw.dpop),
    policy: policy.settings,
    cors: compileCors(raw.cors),
    sessions: compileSessions(raw.sessions),
    rateLimit: compileRateLimit(raw.rate_limit),
  };
  return { settings, findings: { upstream, policy } };
}

/** The URLs a route advertises or fetches, for the https rule. */
export function routeUrls(raw: RawRoute, index: number): ValueAt[] {
  const at = `routes.${index}`;
  return [
    [`${at}.resource`, raw.resource],
    [`${at}.resource_documentation`, raw.resource_documentation],
    ...(raw.authorization_servers ?? []).map((url, n): ValueAt => [`${at}.authorization_servers.${n}`, url]),
    ...(raw.tokens === undefined ? [] : tokensUrls(raw.tokens, at)),
    ...upstreamAuthUrls(raw.upstream.auth, at),
  ];
}

/** The secrets a route holds, for the literal-secret warning. */
export function routeSecrets(raw: RawRoute, index: number): ValueAt[] {
  const at = `routes.${index}`;
  return [...upstreamAuthSecrets(raw.upstream.auth, at), ...(raw.tokens === undefined ? [] : tokensSecrets(raw.tokens, at))];
}
