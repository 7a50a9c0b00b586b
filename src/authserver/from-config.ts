import type { CompiledConfig, CompiledRoute } from '../config/types.js';
import type { DevAuthServerOptions, DevClient, DevResource } from './types.js';

/** The MCP authorization spec's example scope; always offered so clients following the spec examples succeed. */
const BASE_SCOPE = 'mcp:tools';

function policyScopes(route: CompiledRoute): string[] {
  const { scopes, tools, methods, resources, prompts } = route.policy;
  return [...scopes, ...[tools, methods, resources, prompts].flatMap((table) => [...table.values()].flat())];
}

/**
 * One resource per gateway route: its canonical resource URI, and every scope the route advertises or its policy
 * can demand. Routes validated only by introspection get opaque tokens (oidc-provider introspects only those).
 */
export function resourcesFromRoutes(routes: readonly CompiledRoute[]): DevResource[] {
  return routes.map((route) => ({
    resource: route.resource,
    scopes: [...new Set([BASE_SCOPE, ...route.scopesSupported, ...policyScopes(route)])],
    accessTokenFormat: route.tokens.jwt === undefined && route.tokens.introspection !== undefined ? 'opaque' : 'jwt',
  }));
}

/**
 * The gateway's introspection credentials, registered as confidential clients with no grant of their own (the
 * server answers introspection only to authenticated clients). Reveals the secrets: pass the result only to
 * `startDevAuthServer`.
 */
export function introspectionClientsFromRoutes(routes: readonly CompiledRoute[]): DevClient[] {
  const clients = new Map<string, DevClient>();
  for (const route of routes) {
    const settings = route.tokens.introspection;
    if (settings === undefined) continue;
    if (settings.clientSecret === undefined) {
      throw new TypeError(`route "${route.name}": introspection at the development server needs a client_secret`);
    }
    const client: DevClient = {
      client_id: settings.clientId,
      client_secret: settings.clientSecret.reveal(),
      grant_types: [],
      token_endpoint_auth_method: settings.authMethod,
    };
    const known = clients.get(client.client_id);
    if (
      known !== undefined &&
      (known.client_secret !== client.client_secret || known.token_endpoint_auth_method !== client.token_endpoint_auth_method)
    ) {
      throw new TypeError(`routes use introspection client "${client.client_id}" with different credentials`);
    }
    clients.set(client.client_id, client);
  }
  return [...clients.values()];
}

/**
 * Options to run the development server as the authorization server of a gateway config: its issuer is the first
 * route's first `authorization_servers` entry (host and port come from it), resources and introspection clients
 * come from the routes.
 */
export function devAuthServerOptionsFromConfig(
  config: CompiledConfig,
  options: { readonly autoApprove: boolean; readonly issuer?: string },
): DevAuthServerOptions {
  const issuer = options.issuer ?? config.routes[0]?.authorizationServers[0];
  if (issuer === undefined) throw new TypeError('the config names no authorization server');
  const url = new URL(issuer);
  return {
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    issuer: url.href.replace(/\/$/, ''),
    resources: resourcesFromRoutes(config.routes),
    clients: introspectionClientsFromRoutes(config.routes),
    autoApprove: options.autoApprove,
    allowLoopbackClientMetadata: true,
  };
}
