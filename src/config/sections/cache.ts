import { z } from 'zod';
import { duration, hostPortList, rule, secret } from '../fields.js';
import { MEMORY_RECORD_KINDS, type MemoryBounds, type MemoryRecordKind } from '../memory-bounds.js';
import type { ValueAt } from '../problem.js';
import { redisUrlProblem } from '../rules.js';
import { Secret, optionalSecret } from '../secret.js';

/** `cache`: where the gateway keeps its records (introspection answers, session bindings, grants, ...). */

/** `cache.memory`: one bound per record kind, so one kind's flood never evicts another kind's records. */
const memoryBounds = z
  .strictObject(
    Object.fromEntries(
      Object.entries(MEMORY_RECORD_KINDS).map(([kind, { default: bound, meaning }]) => [
        kind,
        z.number().int().min(100).default(bound).describe(`${meaning} Default: ${bound}.`),
      ]),
    ) as Record<MemoryRecordKind, z.ZodDefault<z.ZodNumber>>,
  )
  .prefault({})
  .describe('Most records the gateway keeps in process, per kind (the least recently used of that kind go first).');

const REDIS_MODES = ['redis_url', 'redis_sentinel', 'redis_cluster'] as const;

function redisTls(description: string) {
  return z.boolean().default(false).describe(`${description} Default: false.`);
}

const redisSentinel = z
  .strictObject({
    name: z.string().min(1).describe('Master group name the sentinels monitor, e.g. mymaster.'),
    sentinels: hostPortList('Sentinels as host:port, e.g. ["sentinel-0.redis:26379"].'),
    password: secret('Password of the Redis data nodes.').optional(),
    sentinel_password: secret('Password of the sentinels.').optional(),
    db: z.number().int().nonnegative().default(0).describe('Database number. Default: 0.'),
    tls: redisTls('TLS to the sentinels and the data nodes.'),
  })
  .describe('Redis behind Sentinel: the current primary is asked from the sentinels and followed across failovers.');

const redisCluster = z
  .strictObject({
    nodes: hostPortList('Seed nodes as host:port, e.g. ["redis-0.redis:6379"]; the rest is discovered.'),
    password: secret('Password of the cluster nodes.').optional(),
    tls: redisTls('TLS to the cluster nodes.'),
  })
  .describe('Redis Cluster: keys spread over the masters by slot; the topology is discovered from the seed nodes.');

export const cacheSchema = z
  .strictObject({
    redis_url: secret('redis:// or rediss:// URL of one Redis server. Default: in-process cache.')
      .superRefine(rule(redisUrlProblem))
      .optional(),
    redis_sentinel: redisSentinel.optional(),
    redis_cluster: redisCluster.optional(),
    key_secret: secret('HMAC key for cache keys, at least 32 characters. Required with any Redis mode.')
      .min(32, { error: 'must be at least 32 characters' })
      .optional(),
    key_prefix: z.string().default('mcpgw:').describe('Prefix of every Redis key. Default: "mcpgw:".'),
    command_timeout: duration(
      '150ms',
      'Longest wait for one Redis command before it counts as a miss (introspection then asks the authorization server; a session this replica has seen is still served).',
      { min: 10, max: 10_000 },
    ),
    memory: memoryBounds,
  })
  .superRefine((value, ctx) => {
    const modes = REDIS_MODES.filter((mode) => value[mode] !== undefined);
    if (modes.length > 1) {
      ctx.addIssue({ code: 'custom', message: `set only one of ${REDIS_MODES.join(', ')}` });
    }
    const [mode] = modes;
    if (mode !== undefined && value.key_secret === undefined) {
      ctx.addIssue({ code: 'custom', path: ['key_secret'], message: `is required when ${mode} is set` });
    }
  })
  .prefault({})
  .describe(
    'Shared cache for introspection answers and session bindings: at most one of redis_url, redis_sentinel, redis_cluster.',
  );

type RawCache = z.output<typeof cacheSchema>;

/** One Redis endpoint (a sentinel or a cluster seed node). */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** How the shared cache reaches Redis: one server by URL, a Sentinel-managed primary, or a Cluster. */
export type RedisConnection =
  | { readonly mode: 'standalone'; readonly url: Secret }
  | {
      readonly mode: 'sentinel';
      /** Master group name the sentinels monitor. */
      readonly name: string;
      readonly sentinels: readonly HostPort[];
      /** Password of the data nodes. */
      readonly password: Secret | undefined;
      readonly sentinelPassword: Secret | undefined;
      readonly db: number;
      /** TLS to the sentinels and the data nodes. */
      readonly tls: boolean;
    }
  | {
      readonly mode: 'cluster';
      /** Seed nodes; the rest of the cluster is discovered from them. */
      readonly nodes: readonly HostPort[];
      readonly password: Secret | undefined;
      readonly tls: boolean;
    };

export interface CacheSettings {
  /** Absent → in-process LRU cache (unless `redis` is set). Kept for `redis_url`; `redis` covers every mode. */
  readonly redisUrl: Secret | undefined;
  /** Absent → in-process LRU cache. Optional so settings written before Sentinel/Cluster support stay valid. */
  readonly redis?: RedisConnection | undefined;
  /** HMAC key for cache keys; required with Redis, random per process otherwise. */
  readonly keySecret: Secret | undefined;
  readonly keyPrefix: string;
  /** Longest wait for one Redis command before it counts as a miss; absent → the store's default (150 ms). */
  readonly commandTimeout?: number;
  /** Bounds of the in-process store per record kind; absent → the defaults. */
  readonly memory?: MemoryBounds;
}

export function compileCache(raw: RawCache): CacheSettings {
  return {
    redisUrl: optionalSecret(raw.redis_url),
    redis: compileRedis(raw),
    keySecret: optionalSecret(raw.key_secret),
    keyPrefix: raw.key_prefix,
    commandTimeout: raw.command_timeout,
    memory: Object.freeze({ ...raw.memory }),
  };
}

/** The schema allows at most one mode. */
function compileRedis(cache: RawCache): RedisConnection | undefined {
  const { redis_url: url, redis_sentinel: sentinel, redis_cluster: cluster } = cache;
  if (url !== undefined) return { mode: 'standalone', url: new Secret(url) };
  if (sentinel !== undefined) {
    return {
      mode: 'sentinel',
      name: sentinel.name,
      sentinels: sentinel.sentinels,
      password: optionalSecret(sentinel.password),
      sentinelPassword: optionalSecret(sentinel.sentinel_password),
      db: sentinel.db,
      tls: sentinel.tls,
    };
  }
  if (cluster !== undefined) {
    return { mode: 'cluster', nodes: cluster.nodes, password: optionalSecret(cluster.password), tls: cluster.tls };
  }
  return undefined;
}

/** The secrets this section holds, for the literal-secret warning. */
export function cacheSecrets(raw: RawCache): ValueAt[] {
  return [
    ['cache.redis_url', raw.redis_url],
    ['cache.redis_sentinel.password', raw.redis_sentinel?.password],
    ['cache.redis_sentinel.sentinel_password', raw.redis_sentinel?.sentinel_password],
    ['cache.redis_cluster.password', raw.redis_cluster?.password],
    ['cache.key_secret', raw.key_secret],
  ];
}

/** Whether any Redis mode is set (else every record stays in this process). */
export function usesRedis(raw: RawCache): boolean {
  return REDIS_MODES.some((mode) => raw[mode] !== undefined);
}
