import type { CacheStatus } from '../cache/store.js';
import type { Runtime } from '../runtime.js';

export interface Readiness {
  readonly ready: boolean;
  readonly body: {
    readonly status: 'ready' | 'not_ready' | 'draining';
    /** Per route name: can its verifier decide (JWKS fetched)? No upstream data is exposed here. */
    readonly routes: Readonly<Record<string, boolean>>;
    /** Reported, never gating: the cache is an optimisation. */
    readonly cache: CacheStatus;
  };
}

export function readiness(runtime: Runtime, cache: CacheStatus, draining: boolean): Readiness {
  const routes: Record<string, boolean> = {};
  for (const { route, verifier } of runtime.routes.values()) routes[route.name] = verifier.isReady();
  const allRoutesReady = Object.values(routes).every(Boolean);
  const status = draining ? 'draining' : allRoutesReady ? 'ready' : 'not_ready';
  return { ready: status === 'ready', body: { status, routes, cache } };
}
