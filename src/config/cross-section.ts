import type { ConfigProblem, ValueAt } from './problem.js';
import type { RawConfig } from './schema.js';
import {
  AUTHORIZATION_SERVER_PATHS,
  authorizationServerSecrets,
  authorizationServerUrls,
} from './sections/authorization-server.js';
import { cacheSecrets, usesRedis } from './sections/cache.js';
import { consentLoginIssuer, consentSecrets, consentUrls, userOAuthRoutes } from './sections/consent.js';
import type { DecisionProxy } from './sections/decision.js';
import { routeSecrets, routeUrls } from './sections/routes/route.js';
import { decidesPerOperation } from './sections/routes/policy.js';
import { callerIssuer } from './sections/routes/tokens.js';
import { telemetrySecrets, telemetryWarnings } from './sections/telemetry.js';
import { isInsecureHttp } from './url.js';

/**
 * Checks that judge keys of several sections together: one rule, one function, here rather than spread over the
 * sections. Each section only says which of its values are URLs the gateway fetches or advertises and which are
 * secrets. compile.ts places these findings among the sections' own in the order check-config prints them.
 */

/** Every URL that must be https unless it points at this machine or `allow_insecure_http` is set. */
export function insecureHttpProblems(raw: RawConfig): ConfigProblem[] {
  if (raw.allow_insecure_http) return [];
  const urls: ValueAt[] = [
    ['public_url', raw.public_url],
    ...raw.routes.flatMap((route, index) => routeUrls(route, index)),
    ...consentUrls(raw.consent),
    ...authorizationServerUrls(raw.authorization_server),
  ];
  return urls
    .filter((entry): entry is [string, string] => entry[1] !== undefined && isInsecureHttp(entry[1]))
    .map(([path]) => ({
      path,
      message: 'must use https (http is allowed only for loopback hosts, or with allow_insecure_http: true)',
    }));
}

/**
 * Every listener is its own socket, so each needs its own port (0 = any free one): the admin listener's metrics and
 * the decision listener's answers are never served on the main listener (test/unit/config/operations-settings.test.ts).
 */
export function listenerPortProblems(raw: RawConfig): ConfigProblem[] {
  const { admin, listen, decision } = raw;
  const problems: ConfigProblem[] = [];
  if (admin.enabled && admin.port !== 0 && admin.port === listen.port) {
    problems.push({ path: 'admin.port', message: `must differ from listen.port (${listen.port})` });
  }
  if (decision && decision.port !== 0) {
    if (decision.port === listen.port) problems.push({ path: 'decision.port', message: `must differ from listen.port (${listen.port})` });
    else if (admin.enabled && decision.port === admin.port) problems.push({ path: 'decision.port', message: `must differ from admin.port (${admin.port})` });
  }
  return problems;
}

/** user_oauth needs the consent section, and one sign-in issuer that is the issuer of every such route's callers. */
export function consentProblems(raw: RawConfig): ConfigProblem[] {
  const routes = userOAuthRoutes(raw.routes);
  if (routes.length === 0) return [];
  if (raw.consent === undefined) {
    const [, index] = routes[0] ?? [];
    return [{ path: `routes.${index}.upstream.auth.type`, message: 'user_oauth needs the top-level consent section (consent.login)' }];
  }
  const issuer = consentLoginIssuer(raw.consent, raw.routes);
  if (issuer === undefined) {
    return [{ path: 'consent.login.issuer', message: 'is required: no user_oauth route names its callers\' issuer (tokens.jwt.issuer)' }];
  }
  return routes.flatMap(([route, index]) => {
    const callers = callerIssuer(route.tokens);
    if (callers === undefined || callers === issuer) return [];
    const path = raw.consent?.login.issuer === undefined ? 'consent.login.issuer' : `routes.${index}.upstream.auth`;
    return [{ path, message: `callers of routes.${index} come from ${callers}, but consent sign-in is at ${issuer}: set one issuer for every user_oauth route` }];
  });
}

/**
 * A route names its authorization server and how its tokens are checked (`authorization_servers` with `tokens`),
 * or names neither and uses the gateway's own (`authorization_server`). With the gateway's own, no route may live
 * where it answers.
 */
export function authorizationServerRouteProblems(raw: RawConfig): ConfigProblem[] {
  const served = raw.authorization_server !== undefined;
  // Under the issuer's path, when it has one (the server is mounted there).
  const mount = new URL(raw.authorization_server?.issuer ?? raw.public_url).pathname.replace(/\/$/, '');
  const prefix = mount + AUTHORIZATION_SERVER_PATHS.prefix;
  const registration = mount + AUTHORIZATION_SERVER_PATHS.registration;
  return raw.routes.flatMap((route, index): ConfigProblem[] => {
    const at = `routes.${index}`;
    if (served && (route.path === registration || route.path === prefix || route.path.startsWith(`${prefix}/`))) {
      return [{ path: `${at}.path`, message: `must not be ${registration} or under ${prefix}/ (the gateway's authorization server answers there)` }];
    }
    if (route.tokens === undefined && !served) {
      return [{ path: `${at}.tokens`, message: 'is required unless the top-level authorization_server section makes the gateway issue the tokens' }];
    }
    if (route.tokens !== undefined && route.authorization_servers === undefined) {
      return [{ path: `${at}.authorization_servers`, message: 'is required with tokens (the issuers clients get those tokens from)' }];
    }
    return [];
  });
}

/** The warnings spanning sections: literal secrets first, then one per setting that works but is not what it seems. */
export function crossSectionWarnings(raw: RawConfig, referencedPaths: ReadonlySet<string>): string[] {
  const found: string[] = [];
  if (raw.allow_insecure_http) {
    found.push('allow_insecure_http: true permits plain http to remote hosts; development only');
  }
  if (raw.signing_key === undefined && raw.routes.some((route) => route.upstream.identity !== undefined)) {
    found.push(
      'signing_key: not set; identity assertions are signed with a key generated per process (set signing_key when running several replicas or restarting)',
    );
  }
  if (raw.log.audit_subject === 'hashed' && raw.cache.key_secret === undefined) {
    found.push(
      'log.audit_subject: hashed without cache.key_secret; subjects are hashed with a key generated per process, so digests change at every restart and differ between replicas (set cache.key_secret)',
    );
  }
  if (raw.decision) found.push(...decisionListenerWarnings(raw, raw.decision.proxy));
  if (raw.authorization_server !== undefined && raw.authorization_server.entitlements.length === 0) {
    found.push('authorization_server.entitlements: empty; nobody who signs in can be granted any scope');
  }
  if (raw.authorization_server !== undefined && !usesRedis(raw.cache)) {
    found.push(
      'cache: no Redis; the authorization server keeps clients, consents and refresh tokens in this process only (lost at restart, not shared by replicas)',
    );
  }
  const userOAuth = userOAuthRoutes(raw.routes).length > 0;
  if (raw.consent !== undefined && !userOAuth) {
    found.push('consent: set, but no route uses upstream.auth.type user_oauth');
  }
  if (userOAuth && !usesRedis(raw.cache)) {
    found.push(
      'cache: no Redis; user_oauth grants are kept in this process only (lost at restart, not shared by replicas): users connect again',
    );
  }
  found.push(...telemetryWarnings(raw.telemetry));
  return [...literalSecretWarnings(raw, referencedPaths), ...found];
}

/** `referencedPaths` lists the strings written as secret references; any other secret is written in the file. */
function literalSecretWarnings(raw: RawConfig, referencedPaths: ReadonlySet<string>): string[] {
  const secrets: ValueAt[] = [
    ...cacheSecrets(raw.cache),
    ['signing_key', raw.signing_key],
    ['decision.secret', raw.decision?.secret],
    ...consentSecrets(raw.consent),
    ...authorizationServerSecrets(raw.authorization_server),
    ...raw.routes.flatMap((route, index) => routeSecrets(route, index)),
    ...telemetrySecrets(raw.telemetry),
  ];
  return secrets
    .filter(([path, value]) => value !== undefined && !referencedPaths.has(path))
    .map(([path]) => `${path}: literal secret in config; prefer \${env:…} or \${file:…}`);
}

/** How each proxy can hand the decision listener the request body. */
const SENDING_THE_BODY: Readonly<Record<DecisionProxy, string>> = {
  nginx: 'nginx auth_request sends none: use config/nginx/nginx-with-body.conf (njs)',
  traefik: 'set forwardBody: true on the forwardAuth middleware (Traefik 3.4 or later)',
  envoy: 'configure ext_authz with_request_body',
};

/** What the decision listener cannot do for a route, or needs from the proxy in front of it. */
function decisionListenerWarnings(raw: RawConfig, proxy: DecisionProxy): string[] {
  const found: string[] = [];
  if (proxy === 'traefik' && raw.trusted_proxies.length === 0) {
    found.push(
      'trusted_proxies: empty, but Traefik names the client\'s Host and address only in X-Forwarded-Host / X-Forwarded-For: list its address, or every question is decided with its own Host and address',
    );
  }
  raw.routes.forEach((route, index) => {
    const { policy } = route;
    if (policy.hide_unauthorized) {
      found.push(
        `routes.${index}.policy.hide_unauthorized: lists are filtered only when the gateway is the proxy; through the decision listener they reach clients unfiltered (every call is still authorized)`,
      );
    }
    if (decidesPerOperation(policy)) {
      const headers = route.upstream.validates_mirrored_headers
        ? 'requests of MCP 2026-07-28 or later are decided from their Mcp-Method / Mcp-Name headers; older ones'
        : 'a request';
      found.push(
        `routes.${index}.policy: decided per operation; through the decision listener ${headers} without the body pass only with every scope the policy names (others get 400): ${SENDING_THE_BODY[proxy]}`,
      );
    }
  });
  return found;
}
