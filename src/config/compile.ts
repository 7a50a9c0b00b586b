import { deepFreeze, immutableMap, immutableSet } from './freeze.js';
import type { ConfigProblem } from './problem.js';
import type { RawConfig } from './schema.js';
import { Secret, optionalSecret } from './secret.js';
import { compileAdmin } from './sections/admin.js';
import { compileCache, usesRedis } from './sections/cache.js';
import { compileDecision, type DecisionProxy } from './sections/decision.js';
import { compileLimits } from './sections/limits.js';
import { compileListen } from './sections/listen.js';
import { compileLog } from './sections/log.js';
import { compilePublicUrl, publicBase } from './sections/public-url.js';
import { compileShutdown } from './sections/shutdown.js';
import type {
  AuthorizationCodeClient,
  CompiledConfig,
  ConsentSettings,
  CompiledRoute,
  IntrospectionSettings,
  JwtSettings,
  PolicySettings,
  TokenEndpointSettings,
  UpstreamAuth,
} from './types.js';
import { normalizeResourceUri, resourceUriForm } from './resource-uri.js';
import { isInsecureHttp } from './url.js';

/** RFC 9728 §3.1: the PRM path is this prefix followed by the resource's path. */
export const WELL_KNOWN_PRM = '/.well-known/oauth-protected-resource';

type RawRoute = RawConfig['routes'][number];
/** A route before the shape-B (default) route is chosen. */
type PartialRoute = Omit<CompiledRoute, 'isDefault'>;

export type CompileResult = { config: CompiledConfig } | { problems: ConfigProblem[] };

/**
 * Checks spanning several values (uniqueness, default route, http allowed only by `allow_insecure_http`) and
 * builds the frozen `CompiledConfig`. `referencedPaths` lists the strings written as secret references, so
 * literal secrets can be warned about.
 */
export function compileConfig(raw: RawConfig, referencedPaths: ReadonlySet<string> = new Set()): CompileResult {
  const publicUrl = publicBase(raw);
  const routes = raw.routes.map((route) => compileRoute(route, publicUrl));
  const shapeBIndex = raw.routes.length === 1 ? 0 : raw.routes.findIndex((route) => route.default);
  const problems = [
    ...insecureHttpProblems(raw),
    ...uniquenessProblems(raw.routes, routes),
    ...defaultRouteProblems(raw.routes, routes, shapeBIndex),
    ...identityHeaderProblems(raw.routes),
    ...resourcePolicyProblems(raw.routes),
    ...adminPortProblems(raw),
    ...consentProblems(raw),
  ];
  if (problems.length > 0) return { problems };

  const compiledRoutes = routes.map((route, index) => ({ ...route, isDefault: index === shapeBIndex }));
  const shapeB = compiledRoutes[shapeBIndex];
  const config: CompiledConfig = {
    listen: compileListen(raw.listen),
    admin: compileAdmin(raw.admin),
    decision: compileDecision(raw.decision),
    shutdown: compileShutdown(raw.shutdown),
    ...compilePublicUrl(raw),
    routes: compiledRoutes,
    routesByPath: immutableMap(compiledRoutes.map((route) => [route.path, route])),
    routesByMetadataPath: immutableMap([
      ...compiledRoutes.map((route) => [route.metadataPath, route] as const),
      ...(shapeB ? [[WELL_KNOWN_PRM, shapeB] as const] : []),
    ]),
    cache: compileCache(raw.cache),
    consent: compileConsent(raw),
    limits: compileLimits(raw.limits),
    signingKey: optionalSecret(raw.signing_key),
    ...compileLog(raw.log),
    warnings: warnings(raw, referencedPaths),
  };
  return { config: deepFreeze(config) };
}

/** RFC 9728 §3.1 PRM path: well-known prefix + resource path, a terminating slash removed. */
export function metadataPathOf(resource: string): string {
  return WELL_KNOWN_PRM + new URL(resource).pathname.replace(/\/$/, '');
}

function compileRoute(raw: RawRoute, publicUrl: string): PartialRoute {
  const resource = raw.resource ?? publicUrl + raw.path;
  const metadataPath = metadataPathOf(resource);
  const { jwt, introspection } = raw.tokens;
  return {
    name: raw.name,
    path: raw.path,
    resource,
    metadataPath,
    // The PRM is served by the gateway, so its URL is on the public origin even when `resource` is elsewhere.
    metadataUrl: new URL(publicUrl).origin + metadataPath,
    upstream: {
      url: new URL(raw.upstream.url),
      auth: compileUpstreamAuth(raw.upstream.auth),
      identity: raw.upstream.identity && {
        header: raw.upstream.identity.header.toLowerCase(),
        ttl: raw.upstream.identity.ttl,
        audience: raw.upstream.identity.audience ?? new URL(raw.upstream.url).origin,
      },
      forwardHeaders: immutableSet(raw.upstream.forward_headers.map((name) => name.toLowerCase())),
      validatesMirroredHeaders: raw.upstream.validates_mirrored_headers,
      connectTimeout: raw.upstream.timeouts.connect,
      headersTimeout: raw.upstream.timeouts.headers,
      bodyIdleTimeout: raw.upstream.timeouts.body_idle,
    },
    authorizationServers: raw.authorization_servers,
    scopesSupported: raw.scopes_supported,
    resourceName: raw.resource_name,
    resourceDocumentation: raw.resource_documentation,
    tokens: {
      jwt: jwt && compileJwt(jwt, resource),
      introspection: introspection && compileIntrospection(introspection, jwt?.issuer),
    },
    policy: compilePolicy(raw.policy),
    cors: {
      anyOrigin: raw.cors.allowed_origins.includes('*'),
      allowedOrigins: immutableSet(
        raw.cors.allowed_origins.filter((origin) => origin !== '*').map((origin) => origin.toLowerCase()),
      ),
      maxAge: raw.cors.max_age,
    },
    sessions: { bind: raw.sessions.bind, idleTtl: raw.sessions.idle_ttl },
    rateLimit: raw.rate_limit && { requests: raw.rate_limit.requests, per: raw.rate_limit.per },
  };
}

function compileUpstreamAuth(auth: RawRoute['upstream']['auth']): UpstreamAuth {
  switch (auth.type) {
    case 'none':
      return { type: 'none' };
    case 'bearer':
      return { type: 'bearer', token: new Secret(auth.token) };
    case 'header':
      return { type: 'header', name: auth.name, value: new Secret(auth.value) };
    case 'client_credentials':
    case 'token_exchange':
      return { type: auth.type, ...compileTokenEndpoint(auth) };
    case 'user_oauth':
      return {
        type: 'user_oauth',
        ...compileAuthorizationCodeClient(auth.issuer, auth),
        scopes: auth.scope,
        resource: auth.resource,
        header: auth.header?.toLowerCase() ?? 'authorization',
        grantTtl: auth.grant_ttl,
      };
  }
}

type RawAuthorizationCodeClient = Pick<RawUserOAuth, 'client_id' | 'client_secret' | 'auth_method' | 'timeout'>;
type RawUserOAuth = Extract<RawRoute['upstream']['auth'], { type: 'user_oauth' }>;

function compileAuthorizationCodeClient(issuer: string, raw: RawAuthorizationCodeClient): AuthorizationCodeClient {
  return {
    issuer,
    clientId: raw.client_id,
    clientAuth:
      raw.client_secret === undefined ? { method: 'none' } : { method: raw.auth_method, clientSecret: new Secret(raw.client_secret) },
    timeout: raw.timeout,
  };
}

/** The issuer the callers of a route come from, when the config names one. */
function callerIssuer(route: RawRoute): string | undefined {
  return route.tokens.jwt?.issuer ?? route.tokens.introspection?.issuer;
}

function userOAuthRoutes(raw: RawConfig): [RawRoute, number][] {
  return raw.routes.flatMap((route, index): [RawRoute, number][] => (route.upstream.auth.type === 'user_oauth' ? [[route, index]] : []));
}

/**
 * Where the person at a consent link signs in: `consent.login.issuer`, else the one issuer the user_oauth routes'
 * callers come from. Their signed-in `iss` must be the caller's `iss` for a link ever to be accepted.
 */
function consentLoginIssuer(raw: RawConfig): string | undefined {
  return raw.consent?.login.issuer ?? userOAuthRoutes(raw).map(([route]) => callerIssuer(route)).find((issuer) => issuer !== undefined);
}

function compileConsent(raw: RawConfig): ConsentSettings | undefined {
  const issuer = consentLoginIssuer(raw);
  if (raw.consent === undefined || issuer === undefined) return undefined;
  return { login: compileAuthorizationCodeClient(issuer, raw.consent.login), linkTtl: raw.consent.link_ttl };
}

/** user_oauth needs the consent section, and one sign-in issuer that is the issuer of every such route's callers. */
function consentProblems(raw: RawConfig): ConfigProblem[] {
  const routes = userOAuthRoutes(raw);
  if (routes.length === 0) return [];
  if (raw.consent === undefined) {
    const [, index] = routes[0] ?? [];
    return [{ path: `routes.${index}.upstream.auth.type`, message: 'user_oauth needs the top-level consent section (consent.login)' }];
  }
  const issuer = consentLoginIssuer(raw);
  if (issuer === undefined) {
    return [{ path: 'consent.login.issuer', message: 'is required: no user_oauth route names its callers\' issuer (tokens.jwt.issuer)' }];
  }
  return routes.flatMap(([route, index]) => {
    const callers = callerIssuer(route);
    if (callers === undefined || callers === issuer) return [];
    const path = raw.consent?.login.issuer === undefined ? 'consent.login.issuer' : `routes.${index}.upstream.auth`;
    return [{ path, message: `callers of routes.${index} come from ${callers}, but consent sign-in is at ${issuer}: set one issuer for every user_oauth route` }];
  });
}

type RawTokenEndpoint = Extract<RawRoute['upstream']['auth'], { type: 'client_credentials' | 'token_exchange' }>;

function compileTokenEndpoint(auth: RawTokenEndpoint): TokenEndpointSettings {
  return {
    tokenEndpoint: new URL(auth.token_endpoint),
    clientId: auth.client_id,
    // The schema guarantees exactly one of private_key and client_secret.
    clientAuth:
      auth.private_key === undefined
        ? { method: auth.auth_method, clientSecret: new Secret(auth.client_secret ?? '') }
        : { method: 'private_key_jwt', privateKey: new Secret(auth.private_key) },
    scopes: auth.scope,
    resource: auth.resource,
    audience: auth.audience,
    timeout: auth.timeout,
  };
}

function compileJwt(jwt: NonNullable<RawRoute['tokens']['jwt']>, resource: string): JwtSettings {
  return {
    issuer: jwt.issuer,
    jwksUri: jwt.jwks_uri === undefined ? undefined : new URL(jwt.jwks_uri),
    algorithms: jwt.algorithms,
    audience: jwt.audience ?? resource,
    strictAudience: jwt.strict_audience,
    clockTolerance: jwt.clock_tolerance,
    requireTyp: jwt.require_typ,
    maxLifetime: jwt.max_lifetime,
    jwksStaleWindow: jwt.jwks_stale_window,
    jwksCooldown: jwt.jwks_cooldown,
    fetchTimeout: jwt.fetch_timeout,
  };
}

function compileIntrospection(
  introspection: NonNullable<RawRoute['tokens']['introspection']>,
  jwtIssuer: string | undefined,
): IntrospectionSettings {
  return {
    endpoint: new URL(introspection.endpoint),
    clientId: introspection.client_id,
    clientSecret: optionalSecret(introspection.client_secret),
    authMethod: introspection.auth_method,
    issuer: introspection.issuer ?? jwtIssuer,
    timeout: introspection.timeout,
    clockTolerance: introspection.clock_tolerance,
    maxTtl: introspection.cache.max_ttl,
    negativeTtl: introspection.cache.negative_ttl,
  };
}

function compilePolicy(policy: RawRoute['policy']): PolicySettings {
  const toMap = (record: Record<string, string[]>) => immutableMap(Object.entries(record));
  const implies = impliedScopes(policy.implies);
  const operationScopes = [policy.methods, policy.tools, policy.prompts, policy.resources].flatMap((table) =>
    Object.values(table).flat(),
  );
  return {
    scopes: policy.scopes,
    tools: toMap(policy.tools),
    methods: toMap(policy.methods),
    // Keyed by the normal form requests are compared in (K1); resourcePolicyProblems refuses keys without one.
    resources: immutableMap(Object.entries(policy.resources).map(([uri, scopes]) => [normalizeResourceUri(uri) ?? uri, scopes])),
    prompts: toMap(policy.prompts),
    hideUnauthorized: policy.hide_unauthorized,
    implies,
    upfrontScopes: policy.upfront_scopes ? broadestScopes([...policy.scopes, ...operationScopes], implies) : undefined,
  };
}

/**
 * The distinct scopes of `scopes` without those another listed scope implies: asking for the rest grants them
 * all. Of scopes that imply each other, the first listed stays.
 */
export function broadestScopes(scopes: readonly string[], implies: ReadonlyMap<string, readonly string[]>): string[] {
  const distinct = [...new Set(scopes)];
  const implied = (scope: string, by: string) => implies.get(by)?.includes(scope) ?? false;
  /** `other` stands for `scope`: it implies it, and is strictly broader or, as broad, listed earlier. */
  const covers = (other: string, otherIndex: number, scope: string, index: number) =>
    other !== scope && implied(scope, other) && (!implied(other, scope) || otherIndex < index);
  return distinct.filter((scope, index) => !distinct.some((other, otherIndex) => covers(other, otherIndex, scope, index)));
}

/** The transitive closure of `implies`: every scope a granted scope stands for, cycles included only once. */
export function impliedScopes(implies: Readonly<Record<string, readonly string[]>>): ReadonlyMap<string, readonly string[]> {
  const closure = Object.keys(implies).map((start): [string, string[]] => {
    const seen = new Set<string>([start]);
    const pending = [...(implies[start] ?? [])];
    for (let scope = pending.pop(); scope !== undefined; scope = pending.pop()) {
      if (seen.has(scope)) continue;
      seen.add(scope);
      pending.push(...(implies[scope] ?? []));
    }
    seen.delete(start);
    return [start, [...seen]];
  });
  return immutableMap(closure);
}

/** Every URL that must be https unless it points at this machine or `allow_insecure_http` is set. */
function insecureHttpProblems(raw: RawConfig): ConfigProblem[] {
  if (raw.allow_insecure_http) return [];
  const urls: [string, string | undefined][] = [['public_url', raw.public_url]];
  raw.routes.forEach((route, index) => {
    const at = `routes.${index}`;
    const { jwt, introspection } = route.tokens;
    urls.push(
      [`${at}.resource`, route.resource],
      [`${at}.resource_documentation`, route.resource_documentation],
      ...route.authorization_servers.map((url, n): [string, string] => [`${at}.authorization_servers.${n}`, url]),
      [`${at}.tokens.jwt.issuer`, jwt?.issuer],
      [`${at}.tokens.jwt.jwks_uri`, jwt?.jwks_uri],
      [`${at}.tokens.introspection.endpoint`, introspection?.endpoint],
      [`${at}.tokens.introspection.issuer`, introspection?.issuer],
      [`${at}.upstream.auth.token_endpoint`, 'token_endpoint' in route.upstream.auth ? route.upstream.auth.token_endpoint : undefined],
      [`${at}.upstream.auth.issuer`, route.upstream.auth.type === 'user_oauth' ? route.upstream.auth.issuer : undefined],
    );
  });
  urls.push(['consent.login.issuer', raw.consent?.login.issuer]);
  return urls
    .filter((entry): entry is [string, string] => entry[1] !== undefined && isInsecureHttp(entry[1]))
    .map(([path]) => ({
      path,
      message: 'must use https (http is allowed only for loopback hosts, or with allow_insecure_http: true)',
    }));
}

/**
 * Names, paths, resources and PRM paths must each identify one route. A derived value is reported at the key it
 * comes from, once per key, so one duplicated path does not also read as a duplicated resource.
 */
function uniquenessProblems(raw: readonly RawRoute[], routes: readonly PartialRoute[]): ConfigProblem[] {
  const resourceKey = (index: number) => (raw[index]?.resource === undefined ? 'path' : 'resource');
  const checks: [what: string, key: (route: PartialRoute) => string, field: (index: number) => string][] = [
    ['name', (route) => route.name, () => 'name'],
    ['path', (route) => route.path, () => 'path'],
    ['resource', (route) => route.resource, resourceKey],
    ['metadata path', (route) => route.metadataPath, resourceKey],
  ];
  const problems = new Map<string, ConfigProblem>();
  for (const [what, key, field] of checks) {
    const seen = new Map<string, number>();
    routes.forEach((route, index) => {
      const value = key(route);
      const first = seen.get(value);
      const path = `routes.${index}.${field(index)}`;
      if (first === undefined) seen.set(value, index);
      else if (!problems.has(path)) {
        problems.set(path, { path, message: `duplicate ${what} "${value}" (also routes.${first})` });
      }
    });
  }
  return [...problems.values()];
}

/** Why a `policy.resources` key is refused: a URI template, or a URI without a normal form. */
const REFUSED_RESOURCE_KEY = {
  template:
    'is a URI template: keys are exact URIs, so the resources it expands to (resources/read of each) would not be covered; ' +
    'list each resource URI, or require a scope of resources/read in policy.methods',
  not_a_uri: 'must be an absolute URI (scheme:...)',
  ambiguous_separator: "must not hold an encoded '/', '\\' or NUL (%2F, %5C, %00) or a '\\' in its host or path: servers resolve those differently",
} as const;

/** RFC 6570 expressions are braced; no URI holds a raw brace. */
const TEMPLATE_EXPRESSION = /[{}]/;

/**
 * `policy.resources` keys are compared in their normal form (src/config/resource-uri.ts): each must have one, and
 * two keys must not name the same resource (also when they differ only in query or userinfo, which the normal form
 * drops), or one spelling's scopes would silently replace the other's. A URI template is refused: it would only
 * ever match itself (completions, the template listing), never the URIs a server resolves through it, and matching
 * those exactly means matching as each server does (the SDK matches its regex against the whole href, query and
 * fragment included).
 */
function resourcePolicyProblems(raw: readonly RawRoute[]): ConfigProblem[] {
  return raw.flatMap((route, index) => {
    const seen = new Map<string, string>();
    return Object.keys(route.policy.resources).flatMap((uri): ConfigProblem[] => {
      const path = `routes.${index}.policy.resources.${uri}`;
      if (TEMPLATE_EXPRESSION.test(uri)) return [{ path, message: REFUSED_RESOURCE_KEY.template }];
      const form = resourceUriForm(uri);
      if ('refused' in form) return [{ path, message: REFUSED_RESOURCE_KEY[form.refused] }];
      const first = seen.get(form.normal);
      seen.set(form.normal, uri);
      return first === undefined ? [] : [{ path, message: `names the same resource as "${first}" (both normalise to "${form.normal}")` }];
    });
  });
}

function defaultRouteProblems(
  raw: readonly RawRoute[],
  routes: readonly PartialRoute[],
  shapeBIndex: number,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  raw.forEach((route, index) => {
    if (route.default && index !== shapeBIndex) {
      problems.push({
        path: `routes.${index}.default`,
        message: `only one route may be default (also routes.${shapeBIndex})`,
      });
    }
  });
  const root = routes.findIndex((route) => route.metadataPath === WELL_KNOWN_PRM);
  if (shapeBIndex >= 0 && root >= 0 && root !== shapeBIndex) {
    problems.push({
      path: `routes.${shapeBIndex}.default`,
      message: `${WELL_KNOWN_PRM} is already the metadata path of routes.${root}`,
    });
  }
  return problems;
}

/** Every listener is its own socket (checklist J5 for the admin one): each needs its own port (0 = any free one). */
function adminPortProblems(raw: RawConfig): ConfigProblem[] {
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

/** The identity header must not be the header an upstream credential travels in. */
function identityHeaderProblems(routes: readonly RawRoute[]): ConfigProblem[] {
  return routes.flatMap((route, index) => {
    const { auth, identity } = route.upstream;
    const credentialHeader = auth.type === 'header' ? auth.name : auth.type === 'user_oauth' ? auth.header : undefined;
    if (!identity || credentialHeader?.toLowerCase() !== identity.header.toLowerCase()) return [];
    const key = auth.type === 'header' ? 'name' : 'header';
    return [{ path: `routes.${index}.upstream.identity.header`, message: `must differ from upstream.auth.${key}` }];
  });
}

function warnings(raw: RawConfig, referencedPaths: ReadonlySet<string>): string[] {
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
  if (raw.consent !== undefined && userOAuthRoutes(raw).length === 0) {
    found.push('consent: set, but no route uses upstream.auth.type user_oauth');
  }
  if (userOAuthRoutes(raw).length > 0 && !usesRedis(raw.cache)) {
    found.push(
      'cache: no Redis; user_oauth grants are kept in this process only (lost at restart, not shared by replicas): users connect again',
    );
  }
  const secretPaths: [string, string | undefined][] = [
    ['cache.redis_url', raw.cache.redis_url],
    ['cache.redis_sentinel.password', raw.cache.redis_sentinel?.password],
    ['cache.redis_sentinel.sentinel_password', raw.cache.redis_sentinel?.sentinel_password],
    ['cache.redis_cluster.password', raw.cache.redis_cluster?.password],
    ['cache.key_secret', raw.cache.key_secret],
    ['signing_key', raw.signing_key],
    ['consent.login.client_secret', raw.consent?.login.client_secret],
  ];
  raw.routes.forEach((route, index) => {
    const at = `routes.${index}`;
    const { auth } = route.upstream;
    if (auth.type === 'bearer') secretPaths.push([`${at}.upstream.auth.token`, auth.token]);
    if (auth.type === 'header') secretPaths.push([`${at}.upstream.auth.value`, auth.value]);
    if (auth.type === 'client_credentials' || auth.type === 'token_exchange') {
      secretPaths.push([`${at}.upstream.auth.client_secret`, auth.client_secret], [`${at}.upstream.auth.private_key`, auth.private_key]);
    }
    if (auth.type === 'user_oauth') secretPaths.push([`${at}.upstream.auth.client_secret`, auth.client_secret]);
    secretPaths.push([`${at}.tokens.introspection.client_secret`, route.tokens.introspection?.client_secret]);
    found.push(...unadvertisedScopeWarnings(route, at));
  });
  const literals = secretPaths
    .filter(([path, value]) => value !== undefined && !referencedPaths.has(path))
    .map(([path]) => `${path}: literal secret in config; prefer \${env:…} or \${file:…}`);
  return [...literals, ...found];
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
    const perOperation = [policy.tools, policy.methods, policy.resources, policy.prompts].some((byName) => Object.keys(byName).length > 0);
    if (perOperation) {
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

/** Scopes a policy demands but the PRM does not advertise: clients cannot learn to request them. */
function unadvertisedScopeWarnings(route: RawRoute, at: string): string[] {
  const supported = new Set(route.scopes_supported);
  const lists: [string, readonly string[]][] = [[`${at}.policy.scopes`, route.policy.scopes]];
  for (const kind of ['tools', 'methods', 'resources', 'prompts'] as const) {
    for (const [name, scopes] of Object.entries(route.policy[kind])) {
      lists.push([`${at}.policy.${kind}.${name}`, scopes]);
    }
  }
  return lists.flatMap(([path, scopes]) =>
    [...new Set(scopes)]
      .filter((scope) => !supported.has(scope))
      .map((scope) => `${path}: scope "${scope}" is not in scopes_supported`),
  );
}
