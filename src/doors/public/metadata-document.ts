import type { CompiledRoute } from '../../config/types.js';
import { advertisedScopes } from '../../decision/index.js';

/** RFC 9728 §2 protected resource metadata for one route; optional fields are omitted when unset. */
export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly bearer_methods_supported: readonly ['header'];
  readonly scopes_supported?: readonly string[];
  readonly resource_name?: string;
  readonly resource_documentation?: string;
}

export function protectedResourceMetadata(route: CompiledRoute): ProtectedResourceMetadata {
  const scopes = advertisedScopes(route);
  return {
    resource: route.resource,
    authorization_servers: route.authorizationServers,
    bearer_methods_supported: ['header'],
    ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
    ...(route.resourceName === undefined ? {} : { resource_name: route.resourceName }),
    ...(route.resourceDocumentation === undefined ? {} : { resource_documentation: route.resourceDocumentation }),
  };
}

/** Clients may cache the document briefly; a config reload is visible within this many seconds. */
export const METADATA_MAX_AGE_SECONDS = 300;
