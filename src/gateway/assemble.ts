import type { Logger } from 'pino';
import { createJwtVerifierCaches } from '../auth/jwt-verifier.js';
import { createRouteVerifier } from '../auth/route-verifier.js';
import { resolveCacheKeySecret } from './cache-store.js';
import { createCacheStore } from './cache-store.js';
import type { CacheStore } from '../cache/store.js';
import type { CompiledConfig } from '../config/types.js';
import type { AuthCounters } from '../observability/auth-counters.js';
import { createGatewayMetrics } from '../observability/metrics.js';
import { buildServer, type Gateway } from './build.js';
import type { GatewayTracing } from './tracing.js';

export interface AssembleOptions {
  readonly logger: Logger;
  /** Default: Redis when `cache.redis_url` is set, else the in-process cache. */
  readonly cache?: CacheStore;
  /** Default: the gateway's Prometheus counters. */
  readonly counters?: AuthCounters;
  /** Injected in tests: see ServerDeps. */
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  /** Started by startTracing when `telemetry.traces` is set. */
  readonly tracing?: GatewayTracing;
}

/** The production wiring of a compiled config: cache store, per-route verifiers, server. Does not listen. */
export function assembleGateway(config: CompiledConfig, options: AssembleOptions): Gateway {
  const { logger } = options;
  const metrics = createGatewayMetrics();
  const counters = options.counters ?? metrics.authCounters;
  const cache = options.cache ?? createCacheStore(config.cache, logger, { onEvict: metrics.cacheEviction });
  const keySecret = resolveCacheKeySecret(config.cache);
  // Outlives every runtime: a reload's verifiers start with the keys and verified tokens of the ones they replace.
  const jwtCaches = createJwtVerifierCaches();
  return buildServer(config, {
    logger,
    cache,
    keySecret,
    metrics,
    ...(options.fetch && { fetch: options.fetch }),
    ...(options.now && { now: options.now }),
    ...(options.tracing && { tracing: options.tracing }),
    verifierFor: (route) => createRouteVerifier(route, { store: cache, keySecret, logger, counters, jwtCaches }),
  });
}
