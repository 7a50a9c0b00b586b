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
  /** RFC 9728 §2: the algorithms this resource takes in DPoP proofs, on a route that takes DPoP. */
  readonly dpop_signing_alg_values_supported?: readonly string[];
  /** RFC 9728 §2: true when the route takes DPoP-bound tokens only (`dpop.mode: required`). */
  readonly dpop_bound_access_tokens_required?: boolean;
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
    ...(route.dpop.mode === 'bearer_only'
      ? {}
      : { dpop_signing_alg_values_supported: route.dpop.algorithms, dpop_bound_access_tokens_required: route.dpop.mode === 'required' }),
  };
}

/** Clients may cache the document briefly; a config reload is visible within this many seconds. */
export const METADATA_MAX_AGE_SECONDS = 300;
