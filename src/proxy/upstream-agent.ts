import { Agent, Pool } from 'undici';
import type { CompiledRoute, Milliseconds } from '../config/types.js';

interface OriginTimeouts {
  connect: Milliseconds;
  headers: Milliseconds;
  bodyIdle: Milliseconds;
}

/** Routes sharing an upstream origin share a pool; the most permissive timeout wins (0 = no idle limit). */
export function timeoutsByOrigin(routes: readonly CompiledRoute[]): Map<string, OriginTimeouts> {
  const byOrigin = new Map<string, OriginTimeouts>();
  for (const { upstream } of routes) {
    const seen = byOrigin.get(upstream.url.origin);
    byOrigin.set(
      upstream.url.origin,
      seen === undefined
        ? { connect: upstream.connectTimeout, headers: upstream.headersTimeout, bodyIdle: upstream.bodyIdleTimeout }
        : {
            connect: Math.max(seen.connect, upstream.connectTimeout),
            headers: Math.max(seen.headers, upstream.headersTimeout),
            bodyIdle: seen.bodyIdle === 0 || upstream.bodyIdleTimeout === 0 ? 0 : Math.max(seen.bodyIdle, upstream.bodyIdleTimeout),
          },
    );
  }
  return byOrigin;
}

/**
 * One undici Agent for all upstreams, with a keep-alive pool per origin carrying that origin's timeouts.
 * `bodyTimeout: 0` is what keeps quiet SSE streams open: undici's default (300 s) would cut them.
 */
export function createUpstreamAgent(routes: readonly CompiledRoute[]): Agent {
  const timeouts = timeoutsByOrigin(routes);
  return new Agent({
    factory: (origin, options) => {
      const key = typeof origin === 'string' ? new URL(origin).origin : origin.origin;
      const forOrigin = timeouts.get(key);
      return new Pool(origin, {
        ...options,
        ...(forOrigin && {
          connect: { timeout: forOrigin.connect },
          headersTimeout: forOrigin.headers,
          bodyTimeout: forOrigin.bodyIdle,
        }),
      });
    },
  });
}
