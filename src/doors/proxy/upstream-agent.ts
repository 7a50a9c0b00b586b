import { Agent } from 'undici';
import type { CompiledRoute } from '../../config/types.js';

/**
 * One undici Agent per route (keep-alive pools per origin inside it), carrying that route's own timeouts: two
 * routes on one upstream origin with different `upstream.timeouts` each get theirs.
 * `bodyTimeout: 0` (the `body_idle` default) is what keeps quiet SSE streams open: undici's default (300 s) would
 * cut them.
 */
export function createUpstreamAgents(routes: readonly CompiledRoute[]): ReadonlyMap<string, Agent> {
  return new Map(
    routes.map(({ name, upstream }) => [
      name,
      new Agent({
        connect: { timeout: upstream.connectTimeout },
        headersTimeout: upstream.headersTimeout,
        bodyTimeout: upstream.bodyIdleTimeout,
      }),
    ]),
  );
}
