import type { DevResource } from './types.js';

/** RFC 6749 §3.3 scope-token: printable ASCII except space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

export interface ResourceRegistry {
  /** The configured resource a requested indicator names (scheme and host compared case-insensitively), if any. */
  find(indicator: string): DevResource | undefined;
}

function canonicalKey(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    return url.hash === '' && !uri.includes('#') ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Validates the configured resources (absolute URIs without fragment, well-formed scopes, no duplicates). */
export function createResourceRegistry(resources: readonly DevResource[]): ResourceRegistry {
  const byKey = new Map<string, DevResource>();
  resources.forEach((entry, index) => {
    const key = canonicalKey(entry.resource);
    if (key === undefined) throw new TypeError(`resources[${index}].resource must be an absolute URI without fragment`);
    if (byKey.has(key)) throw new TypeError(`resources[${index}].resource is configured twice`);
    const badScope = entry.scopes.findIndex((scope) => !SCOPE_TOKEN.test(scope));
    if (badScope !== -1) throw new TypeError(`resources[${index}].scopes[${badScope}] is not a valid scope token`);
    byKey.set(key, entry);
  });
  return {
    find: (indicator) => {
      const key = canonicalKey(indicator);
      return key === undefined ? undefined : byKey.get(key);
    },
  };
}

/**
 * An authorization request without `scope` asks for what the resource it names advertises (its route's
 * scopes_supported) rather than for nothing, which would end in a token no route accepts. Only a GET carries its
 * parameters in the query, which is read before oidc-provider parses it.
 */
export function defaultScopeFromResource(resources: ResourceRegistry, authorizationPath: string) {
  return async (
    ctx: { path: string; method: string; query: Record<string, string | string[] | undefined> },
    next: () => Promise<unknown>,
  ): Promise<unknown> => {
    if (ctx.path !== authorizationPath || ctx.method !== 'GET' || ctx.query.scope !== undefined) return next();
    const { resource } = ctx.query;
    const defaults = typeof resource === 'string' ? resources.find(resource)?.defaultScopes : undefined;
    if (defaults !== undefined && defaults.length > 0) ctx.query = { ...ctx.query, scope: defaults.join(' ') };
    return next();
  };
}
