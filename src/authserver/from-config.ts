import type { AuthorizationCodeClient, CompiledConfig, CompiledRoute } from '../config/types.js';
import { CONSENT_PATHS } from '../grants/paths.js';
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
    defaultScopes: route.scopesSupported.length > 0 ? route.scopesSupported : [BASE_SCOPE],
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

/** Issuers compared as the server names itself: an origin without a trailing slash. */
function sameIssuer(a: string, b: string): boolean {
  return new URL(a).href.replace(/\/$/, '') === new URL(b).href.replace(/\/$/, '');
}

/** One client per client id; a client id configured twice must be configured alike. */
function mergeClients(clients: readonly DevClient[]): DevClient[] {
  const byId = new Map<string, DevClient>();
  for (const client of clients) {
    const known = byId.get(client.client_id);
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(client)) {
      throw new TypeError(`client "${client.client_id}" is configured twice with different settings`);
    }
    byId.set(client.client_id, client);
  }
  return [...byId.values()];
}

function clientOf(client: AuthorizationCodeClient, redirectUri: string, grantTypes: readonly string[]): DevClient {
  const { clientAuth } = client;
  // The config offers authorization code clients a secret or nothing (public client with PKCE).
  if (clientAuth.method === 'private_key_jwt') throw new TypeError(`client "${client.clientId}": private_key_jwt is not offered here`);
  return {
    client_id: client.clientId,
    ...(clientAuth.method === 'client_secret_basic' || clientAuth.method === 'client_secret_post'
      ? { client_secret: clientAuth.clientSecret.reveal() }
      : {}),
    redirect_uris: [redirectUri],
    grant_types: grantTypes,
    token_endpoint_auth_method: clientAuth.method,
  };
}

/**
 * What the gateway's user_oauth pieces expect at `issuer`: the consent sign-in client (redirect URI: the login
 * callback), and for each route whose upstream authorization server it is, the gateway's client (redirect URI:
 * the consent callback, refresh tokens) and the upstream's resource with the route's scopes. Reveals secrets.
 */
export function consentSetupAt(config: CompiledConfig, issuer: string): { clients: DevClient[]; resources: DevResource[] } {
  const publicUrl = config.publicUrl.href.replace(/\/$/, '');
  const clients: DevClient[] = [];
  const resources: DevResource[] = [];
  const login = config.consent?.login;
  if (login && sameIssuer(login.issuer, issuer)) {
    clients.push(clientOf(login, publicUrl + CONSENT_PATHS.loginCallback, ['authorization_code']));
  }
  for (const route of config.routes) {
    const { auth } = route.upstream;
    if (auth.type !== 'user_oauth' || !sameIssuer(auth.issuer, issuer)) continue;
    // This server requires RFC 8707 resource indicators; the gateway sends one only when configured.
    if (auth.resource === undefined) throw new TypeError(`route "${route.name}": the development server needs upstream.auth.resource`);
    clients.push(clientOf(auth, publicUrl + CONSENT_PATHS.callback, ['authorization_code', 'refresh_token']));
    resources.push({ resource: auth.resource, scopes: [...auth.scopes] });
  }
  return { clients, resources };
}

/**
 * Options to run the development server as an authorization server a gateway config expects: by default the first
 * route's first `authorization_servers` entry (host and port come from the issuer). It serves the routes that name
 * it (resources, introspection clients) and the user_oauth pieces expected there (consentSetupAt): run it twice,
 * once as the gateway's and once as the upstream's ("vendor") authorization server, for the whole consent flow.
 */
export function devAuthServerOptionsFromConfig(
  config: CompiledConfig,
  options: { readonly autoApprove: boolean; readonly issuer?: string },
): DevAuthServerOptions & { readonly issuer: string } {
  const issuer = options.issuer ?? config.routes[0]?.authorizationServers[0];
  if (issuer === undefined) throw new TypeError('the config names no authorization server');
  const url = new URL(issuer);
  const routes = config.routes.filter((route) => route.authorizationServers.some((server) => sameIssuer(server, issuer)));
  const consent = consentSetupAt(config, issuer);
  const resources = [...resourcesFromRoutes(routes), ...consent.resources];
  if (resources.length === 0 && consent.clients.length === 0) {
    throw new TypeError(`the config expects nothing at ${url.origin}: no route names it in authorization_servers or upstream.auth.issuer`);
  }
  return {
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    issuer: url.href.replace(/\/$/, ''),
    resources,
    clients: mergeClients([...introspectionClientsFromRoutes(routes), ...consent.clients]),
    autoApprove: options.autoApprove,
    allowLoopbackClientMetadata: true,
  };
}
