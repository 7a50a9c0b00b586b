import type { CacheStatus } from '../cache/store.js';
import type { DecisionRuntime } from '../decision/index.js';

export interface Readiness {
  readonly ready: boolean;
  readonly body: {
    readonly status: 'ready' | 'not_ready' | 'draining';
    /** Per route name: can its verifier decide (JWKS fetched)? No upstream data is exposed here. */
    readonly routes: Readonly<Record<string, boolean>>;
    /** Gates readiness only until Redis has connected once (see `storeReady`). */
    readonly cache: CacheStatus;
  };
}

/**
 * A replica is ready once Redis has connected at least once: before, it would refuse every session a client opened
 * on another replica. A later outage does not make it unready (all replicas would leave the Service at once): the
 * sessions it has seen are served through the outage, introspection asks the authorization server directly, and
 * only what needs the store (new sessions elsewhere, user grants) answers 503 while it lasts.
 */
function storeReady(cache: CacheStatus): boolean {
  return cache.backend === 'memory' || cache.connectedOnce;
}

export function readiness(runtime: DecisionRuntime, cache: CacheStatus, draining: boolean): Readiness {
  const routes: Record<string, boolean> = {};
  for (const { route, verifier } of runtime.routes.values()) routes[route.name] = verifier.isReady();
  const allRoutesReady = Object.values(routes).every(Boolean);
  const status = draining ? 'draining' : allRoutesReady && storeReady(cache) ? 'ready' : 'not_ready';
  return { ready: status === 'ready', body: { status, routes, cache } };
}
