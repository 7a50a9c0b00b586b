import { z } from 'zod';
import { immutableMap } from '../../freeze.js';
import type { Compiled, ConfigProblem } from '../../problem.js';
import type { GatewayIssuer } from './tokens.js';
import { WELL_KNOWN_PRM, compileRoute, routeSchema, type CompiledRoute, type PartialRoute, type RawRoute } from './route.js';

/**
 * `routes`: the route table. Each request path, resource and metadata path names one route; one route (the only
 * one, or the one marked `default`) is also served at the root metadata path (RFC 9728 §3.1, shape B).
 */

export const routesSchema = z.array(routeSchema).min(1, { error: 'at least one route is required' }).describe('Protected routes.');

export interface RouteTable {
  readonly routes: readonly CompiledRoute[];
  /** Lookup by normalised request path. */
  readonly routesByPath: ReadonlyMap<string, CompiledRoute>;
  /** Lookup by PRM path (shape A, plus shape B `/.well-known/oauth-protected-resource` when applicable). */
  readonly routesByMetadataPath: ReadonlyMap<string, CompiledRoute>;
}

/** `publicBase` is public_url without its trailing slash; `gatewayIssuer` the gateway's own authorization server. */
export function compileRouteTable(raw: readonly RawRoute[], publicBase: string, gatewayIssuer?: GatewayIssuer): Compiled<RouteTable> {
  const parts = raw.map((route, index) => compileRoute(route, index, publicBase, gatewayIssuer));
  const partial = parts.map((part) => part.settings);
  const shapeBIndex = raw.length === 1 ? 0 : raw.findIndex((route) => route.default);
  const routes = partial.map((route, index) => ({ ...route, isDefault: index === shapeBIndex }));
  const shapeB = routes[shapeBIndex];
  const settings: RouteTable = {
    routes,
    routesByPath: immutableMap(routes.map((route) => [route.path, route])),
    routesByMetadataPath: immutableMap([
      ...routes.map((route) => [route.metadataPath, route] as const),
      ...(shapeB ? [[WELL_KNOWN_PRM, shapeB] as const] : []),
    ]),
  };
  return {
    settings,
    // Listed by check, each across all routes, as check-config has always printed them.
    problems: [
      ...uniquenessProblems(raw, partial),
      ...defaultRouteProblems(raw, partial, shapeBIndex),
      ...parts.flatMap((part) => part.findings.upstream.problems),
      ...parts.flatMap((part) => part.findings.policy.problems),
    ],
    warnings: [
      ...parts.flatMap((part) => [...part.findings.upstream.warnings, ...part.findings.policy.warnings]),
      ...sharedAudienceWarnings(partial),
    ],
  };
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

/**
 * An audience two routes accept from one issuer (`tokens.jwt.audience` names another route's resource, or a value
 * another route lists too): a token for either route is good on both (cross-route replay). Sometimes meant (one
 * API served twice, e.g. with and without upfront_scopes), so a warning, at the route that lists the audience.
 */
function sharedAudienceWarnings(routes: readonly PartialRoute[]): string[] {
  const seen = new Map<string, number>();
  return routes.flatMap((route, index) => {
    const jwt = route.tokens.jwt;
    if (!jwt) return [];
    return jwt.audiences.flatMap((audience) => {
      const key = `${jwt.issuer} ${audience}`;
      const first = seen.get(key);
      if (first === undefined) {
        seen.set(key, index);
        return [];
      }
      if (first === index) return [];
      // Named at the route that lists the audience: the other one may just be accepting its own resource.
      const [at, other] = namesAudiences(route) ? [index, first] : [first, index];
      return [`routes.${at}.tokens.jwt.audience: "${audience}" is also accepted by routes.${other} from the same issuer: a token for either route is good on both`];
    });
  });
}

/** Whether the route accepts anything but its own resource (`tokens.jwt.audience` set to other values). */
function namesAudiences(route: PartialRoute): boolean {
  const audiences = route.tokens.jwt?.audiences ?? [];
  return audiences.length !== 1 || audiences[0] !== route.resource;
}
