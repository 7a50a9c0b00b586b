import type { CompiledConfig } from '../config/types.js';

/**
 * Settings a running gateway cannot change (sockets already bound, the cache client already connected, fastify's
 * body limit fixed at start): the YAML paths of those a reload changed. The rest of the reload still applies.
 */
export function restartOnlyChanges(started: CompiledConfig, next: CompiledConfig): string[] {
  const changed: [string, boolean][] = [
    ['listen.host', started.listen.host !== next.listen.host],
    ['listen.port', started.listen.port !== next.listen.port],
    ['admin.enabled', started.admin.enabled !== next.admin.enabled],
    ['admin.host', started.admin.host !== next.admin.host],
    ['admin.port', started.admin.port !== next.admin.port],
    // The rest of `decision` (proxy, secret, path_prefix) applies to the next question.
    ['decision', (started.decision === undefined) !== (next.decision === undefined)],
    ['decision.host', started.decision !== undefined && next.decision !== undefined && started.decision.host !== next.decision.host],
    ['decision.port', started.decision !== undefined && next.decision !== undefined && started.decision.port !== next.decision.port],
    ['cache.redis_url', started.cache.redisUrl?.reveal() !== next.cache.redisUrl?.reveal()],
    // Sentinel / cluster settings hold Secrets: compare what they reveal, never print it.
    ['cache.redis_sentinel', redisIdentity(started, 'sentinel') !== redisIdentity(next, 'sentinel')],
    ['cache.redis_cluster', redisIdentity(started, 'cluster') !== redisIdentity(next, 'cluster')],
    ['cache.key_secret', started.cache.keySecret?.reveal() !== next.cache.keySecret?.reveal()],
    ['cache.key_prefix', started.cache.keyPrefix !== next.cache.keyPrefix],
    ['cache.command_timeout', started.cache.commandTimeout !== next.cache.commandTimeout],
    ['cache.memory', JSON.stringify(started.cache.memory) !== JSON.stringify(next.cache.memory)],
    // The authorization server's addresses are routed at start; the rest of the section applies to the next request.
    ['authorization_server', (started.authorizationServer === undefined) !== (next.authorizationServer === undefined)],
    [
      'authorization_server.issuer',
      started.authorizationServer !== undefined && next.authorizationServer !== undefined && started.authorizationServer.issuer !== next.authorizationServer.issuer,
    ],
    // Lowering the limit applies at once (enforced per request); raising it past the start value cannot.
    // The tracer provider and its exporter are set up once, at start.
    ['telemetry.traces', tracesIdentity(started) !== tracesIdentity(next)],
    ['limits.max_body_bytes', next.limits.maxBodyBytes > started.limits.maxBodyBytes],
  ];
  return changed.filter(([, differs]) => differs).map(([path]) => path);
}

/** Everything that identifies the Redis connection, secrets revealed (compared, never printed). */
function redisIdentity(config: CompiledConfig, mode: 'sentinel' | 'cluster'): string {
  const redis = config.cache.redis;
  if (redis?.mode !== mode) return '';
  const { password, ...rest } = redis;
  const sentinelPassword = redis.mode === 'sentinel' ? redis.sentinelPassword?.reveal() : undefined;
  return JSON.stringify({ ...rest, password: password?.reveal(), sentinelPassword });
}

/** What the tracer provider was built from, header values revealed (compared, never printed). */
function tracesIdentity(config: CompiledConfig): string {
  const traces = config.telemetry.traces;
  if (!traces) return '';
  const headers = [...traces.headers].map(([name, value]) => [name, value.reveal()]);
  return JSON.stringify({ endpoint: traces.endpoint.href, sampleRatio: traces.sampleRatio, headers });
}
