import type { TokenVerifier } from './auth/types.js';
import type { CompiledConfig, CompiledRoute } from './config/types.js';
import { createUpstreamCredentialProvider, type UpstreamCredentialProvider } from './proxy/upstream-credentials.js';

/** Everything a request on one route needs, built once per compiled config. */
export interface RouteRuntime {
  readonly route: CompiledRoute;
  readonly verifier: TokenVerifier;
  readonly credentials: UpstreamCredentialProvider;
  /** Scopes advertised in a 401 challenge: what any request on this route needs, else what the route offers. */
  readonly challengeScopes: readonly string[];
}

export interface Runtime {
  readonly config: CompiledConfig;
  /** Keyed by normalised route path. */
  readonly routes: ReadonlyMap<string, RouteRuntime>;
}

export type VerifierFactory = (route: CompiledRoute) => TokenVerifier;

export function createRuntime(config: CompiledConfig, verifierFor: VerifierFactory): Runtime {
  const routes = new Map<string, RouteRuntime>();
  for (const route of config.routes) {
    routes.set(route.path, {
      route,
      verifier: verifierFor(route),
      credentials: createUpstreamCredentialProvider(route.upstream.auth),
      challengeScopes: route.policy.scopes.length > 0 ? route.policy.scopes : route.scopesSupported,
    });
  }
  return { config, routes };
}

export async function closeRuntime(runtime: Runtime): Promise<void> {
  await Promise.all([...runtime.routes.values()].map((entry) => entry.verifier.close()));
}
