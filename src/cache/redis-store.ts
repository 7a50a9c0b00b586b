import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { CacheStatus, CacheStore, Lookup, TokenBucketResult } from './store.js';
import { storableTtl } from './ttl.js';

/** Where the store connects: exactly one of `url`, `sentinel`, `cluster`. Credentials are never logged. */
export type RedisTarget =
  /** `redis://` or `rediss://` (TLS); may carry credentials and a DB number. */
  | { readonly url: string }
  | { readonly sentinel: RedisSentinelTarget }
  | { readonly cluster: RedisClusterTarget };

export interface RedisEndpoint {
  readonly host: string;
  readonly port: number;
}

export interface RedisSentinelTarget {
  /** Master group name the sentinels monitor. */
  readonly name: string;
  readonly sentinels: readonly RedisEndpoint[];
  /** Password of the data nodes. */
  readonly password?: string;
  readonly sentinelPassword?: string;
  readonly db?: number;
  /** TLS to the sentinels and the data nodes. */
  readonly tls?: boolean;
}

export interface RedisClusterTarget {
  /** Seed nodes; the rest of the cluster is discovered from them. */
  readonly nodes: readonly RedisEndpoint[];
  readonly password?: string;
  readonly tls?: boolean;
}

export type RedisStoreOptions = RedisTarget & {
  /** Prepended to every key (ioredis `keyPrefix`): one Redis can serve several gateways or test suites. */
  readonly keyPrefix: string;
  /** Longest wait for one command before it counts as a miss (`cache.command_timeout`). */
  readonly commandTimeoutMs?: number;
  readonly logger?: Logger;
};

export interface RedisStore extends CacheStore {
  /** Resolves true once connected (at once if already), false after `timeoutMs`; never rejects. */
  whenReady(timeoutMs: number): Promise<boolean>;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 150;
const CONNECT_TIMEOUT_MS = 2_000;
const RECONNECT_BASE_MS = 50;
const RECONNECT_CAP_MS = 2_000;
const SUPPORTED_PROTOCOLS: ReadonlySet<string> = new Set(['redis:', 'rediss:']);

/**
 * token-bucket.ts `takeFromBucket`, run inside Redis so concurrent takes from several replicas are atomic.
 * ARGV: capacity, refill period (ms), now (ms). Returns {allowed 0|1, retry after ms}.
 */
const TAKE_TOKEN_SCRIPT = `
local capacity = tonumber(ARGV[1])
local refill = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local rate = capacity / refill
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = capacity
  at = now
end
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate)
local allowed = 0
local retry = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  retry = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], refill)
return {allowed, retry}
`;

/** Compare-and-extend in one step: a revocation that replaced the value in between is never undone. */
const TOUCH_IF_EQUALS_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;

/** Compare-and-delete in one step: a GET then DEL from the client could remove a value set in between. */
const DELETE_IF_EQUALS_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

/**
 * A CacheStore on Redis (one server, Sentinel or Cluster). Every command either answers within the command
 * timeout or counts as a miss (`undefined` / `false`); nothing waits for a reconnect, nothing is queued while
 * disconnected, and the client reconnects by itself with capped backoff.
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const log = options.logger?.child({ component: 'redis-cache' });
  const client = connect(options);
  client.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE_TOKEN_SCRIPT });
  client.defineCommand('deleteIfEquals', { numberOfKeys: 1, lua: DELETE_IF_EQUALS_SCRIPT });
  client.defineCommand('touchIfEquals', { numberOfKeys: 1, lua: TOUCH_IF_EQUALS_SCRIPT });
  // True from the first failure until the next success: one warning per outage, not one per command.
  let degraded = false;
  let connectedOnce = false;

  const failed = (operation: string, error: unknown): void => {
    if (degraded) return;
    degraded = true;
    log?.warn({ operation, error: describeError(error) }, 'redis cache unavailable, continuing without it');
  };
  const succeeded = (): void => {
    if (!degraded) return;
    degraded = false;
    log?.info('redis cache available again');
  };

  client.on('error', (error: unknown) => failed('connection', error));
  // Cluster: a lost node reports here, not as 'error'.
  client.on('node error', (error: unknown) => failed('connection', error));
  client.on('ready', () => {
    connectedOnce = true;
    succeeded();
  });

  async function lookup(key: string): Promise<Lookup<string>> {
    try {
      const value = await client.get(key);
      succeeded();
      return value === null ? { kind: 'absent' } : { kind: 'found', value };
    } catch (error) {
      failed('get', error);
      return { kind: 'unavailable' };
    }
  }

  return {
    async get(key) {
      const found = await lookup(key);
      return found.kind === 'found' ? found.value : undefined;
    },
    lookup,
    async set(key, value, ttlMs) {
      const ttl = storableTtl(ttlMs);
      if (ttl === undefined) return false;
      try {
        await client.set(key, value, 'PX', ttl);
        succeeded();
        return true;
      } catch (error) {
        failed('set', error);
        return false;
      }
    },
    async delete(key) {
      try {
        const removed = await client.del(key);
        succeeded();
        return removed > 0;
      } catch (error) {
        failed('delete', error);
        return false;
      }
    },
    async setIfAbsent(key, value, ttlMs) {
      const ttl = storableTtl(ttlMs);
      if (ttl === undefined) return false;
      try {
        const reply = await client.set(key, value, 'PX', ttl, 'NX');
        succeeded();
        return reply === 'OK';
      } catch (error) {
        failed('setIfAbsent', error);
        return false;
      }
    },
    async deleteIfEquals(key, value) {
      try {
        const removed = await (client as RedisClient & DeleteIfEqualsCommand).deleteIfEquals(key, value);
        succeeded();
        return removed === 1;
      } catch (error) {
        failed('deleteIfEquals', error);
        return false;
      }
    },
    async touchIfEquals(key, value, ttlMs) {
      const ttl = storableTtl(ttlMs);
      if (ttl === undefined) return false;
      try {
        const touched = await (client as RedisClient & TouchIfEqualsCommand).touchIfEquals(key, value, ttl);
        succeeded();
        return touched === 1;
      } catch (error) {
        failed('touchIfEquals', error);
        return false;
      }
    },
    async scan(prefix, limit) {
      try {
        const keys = await scanKeys(client, options.keyPrefix, prefix, limit);
        succeeded();
        return keys;
      } catch (error) {
        failed('scan', error);
        return undefined;
      }
    },
    async takeToken(key, bucket, nowMs) {
      try {
        const reply = await (client as RedisClient & TakeTokenCommand).takeToken(key, bucket.capacity, Math.ceil(bucket.refillMs), Math.floor(nowMs));
        succeeded();
        return bucketResult(reply);
      } catch (error) {
        failed('takeToken', error);
        return undefined;
      }
    },
    status(): CacheStatus {
      if (degraded) return { backend: 'redis', state: 'unavailable', connectedOnce };
      return { backend: 'redis', state: client.status === 'ready' ? 'ready' : 'connecting', connectedOnce };
    },
    whenReady(timeoutMs) {
      if (client.status === 'ready') return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (ready: boolean): void => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(ready);
        };
        const onReady = (): void => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        client.on('ready', onReady);
      });
    },
    close() {
      // Nothing stored is worth waiting for: drop the connection and stop reconnecting.
      client.disconnect();
      return Promise.resolve();
    },
  };
}

/** Keys per SCAN round trip: large enough for few round trips, small enough not to stall the server. */
const SCAN_COUNT = 500;

/**
 * SCAN on every primary (a Cluster spreads keys over several). ioredis applies `keyPrefix` to commands' keys but
 * not to a SCAN pattern or its results, so the prefix is added to the pattern and removed from each key.
 */
async function scanKeys(client: RedisClient, keyPrefix: string, prefix: string, limit: number): Promise<string[]> {
  const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client];
  const pattern = `${escapeGlob(keyPrefix + prefix)}*`;
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      cursor = next;
      for (const key of batch) {
        if (keys.length >= limit) return keys;
        keys.push(key.slice(keyPrefix.length));
      }
    } while (cursor !== '0');
  }
  return keys;
}

/** A literal for a Redis glob pattern. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\\\]]/g, (char) => `\\${char}`);
}

interface TakeTokenCommand {
  takeToken(key: string, capacity: number, refillMs: number, nowMs: number): Promise<unknown>;
}

interface TouchIfEqualsCommand {
  touchIfEquals(key: string, value: string, ttlMs: number): Promise<number>;
}

interface DeleteIfEqualsCommand {
  deleteIfEquals(key: string, value: string): Promise<number>;
}

function bucketResult(reply: unknown): TokenBucketResult | undefined {
  if (!Array.isArray(reply)) return undefined;
  const [allowed, retryAfterMs] = reply as unknown[];
  if (allowed === 1) return { allowed: true };
  return typeof retryAfterMs === 'number' ? { allowed: false, retryAfterMs } : undefined;
}

type RedisClient = Redis | Cluster;

function connect(options: RedisStoreOptions): RedisClient {
  if ('sentinel' in options) return new Redis({ ...sentinelOptions(options.sentinel), ...clientOptions(options) });
  if ('cluster' in options) return new Cluster(options.cluster.nodes.map(({ host, port }) => ({ host, port })), clusterOptions(options));
  assertSupportedUrl(options.url);
  return new Redis(options.url, clientOptions(options));
}

/** Per-connection settings shared by every mode (for Cluster: of each node connection). */
function connectionOptions(options: RedisStoreOptions): RedisOptions {
  return {
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    // 0: commands in flight when the connection drops fail immediately instead of waiting for a reconnect, and
    // are not re-sent later (a late SET would outlive the TTL it was computed for).
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: CONNECT_TIMEOUT_MS,
  };
}

function clientOptions(options: RedisStoreOptions): RedisOptions {
  return {
    ...connectionOptions(options),
    keyPrefix: options.keyPrefix,
    // Fail commands at once while disconnected instead of queueing them without bound.
    enableOfflineQueue: false,
    // Connect in the background now, so /readyz reports a state and the first request can already hit.
    lazyConnect: false,
    retryStrategy: reconnectDelay,
    // After a failover a DNS name may point at the new primary while this connection still talks to a replica.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  };
}

function sentinelOptions(sentinel: RedisSentinelTarget): RedisOptions {
  const tls = tlsOptions(sentinel.tls);
  return {
    name: sentinel.name,
    sentinels: sentinel.sentinels.map(({ host, port }) => ({ host, port })),
    password: sentinel.password,
    sentinelPassword: sentinel.sentinelPassword,
    db: sentinel.db ?? 0,
    tls,
    sentinelTLS: tls,
    enableTLSForSentinelMode: tls !== undefined,
    // Asking the sentinels for the primary is bounded like a connect; all unreachable → retried with backoff.
    sentinelCommandTimeout: CONNECT_TIMEOUT_MS,
    sentinelRetryStrategy: reconnectDelay,
  };
}

function clusterOptions(options: RedisStoreOptions & { readonly cluster: RedisClusterTarget }): ClusterOptions {
  const { password, tls } = options.cluster;
  return {
    keyPrefix: options.keyPrefix,
    enableOfflineQueue: false,
    lazyConnect: false,
    clusterRetryStrategy: reconnectDelay,
    // 0: a closed connection or CLUSTERDOWN fails the command at once instead of re-sending it after a delay
    // (the command timeout would already have answered the caller; a late SET must not land).
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    slotsRefreshTimeout: CONNECT_TIMEOUT_MS,
    redisOptions: { ...connectionOptions(options), password, tls: tlsOptions(tls) },
  };
}

/** Node's defaults (system CAs, hostname verification) when TLS is on. */
function tlsOptions(enabled: boolean | undefined): object | undefined {
  return enabled === true ? {} : undefined;
}

/** Exponential backoff capped at 2 s, with jitter so replicas do not reconnect in lockstep. Never gives up. */
function reconnectDelay(attempt: number): number {
  const backoff = Math.min(RECONNECT_BASE_MS * 2 ** Math.min(attempt, 10), RECONNECT_CAP_MS);
  return Math.round(backoff * (0.8 + Math.random() * 0.2));
}

function assertSupportedUrl(url: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new Error('cache.redis_url is not a valid URL');
  }
  if (!SUPPORTED_PROTOCOLS.has(protocol)) throw new Error('cache.redis_url must use redis:// or rediss://');
}

/**
 * Log-safe facts about a Redis failure. Never the error object: ioredis attaches the command with its arguments
 * (keys, values) to reply errors, and server messages may echo arguments.
 */
function describeError(error: unknown): { readonly name: string; readonly code?: string } {
  if (!(error instanceof Error)) return { name: 'unknown' };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return { name: error.name, code };
  // A reply error starts with its class (READONLY, LOADING, WRONGTYPE...): keep only that word.
  if (error.name === 'ReplyError') return { name: error.name, code: /^[A-Z]+/.exec(error.message)?.[0] ?? 'ERR' };
  return { name: error.name, code: clientErrorCode(error.message) };
}

/** ioredis's own errors carry fixed messages; map the ones that matter, never copy a message. */
function clientErrorCode(message: string): string {
  if (message === 'Command timed out') return 'COMMAND_TIMEOUT';
  if (message.startsWith('Reached the max retries')) return 'CONNECTION_LOST';
  if (
    message.startsWith("Stream isn't writeable") ||
    message.startsWith('Connection is closed') ||
    message.startsWith("Cluster isn't ready")
  ) {
    return 'NOT_CONNECTED';
  }
  if (message.startsWith('All sentinels are unreachable')) return 'SENTINELS_UNREACHABLE';
  if (message.startsWith('None of startup nodes') || message.startsWith('Failed to refresh slots cache')) {
    return 'CLUSTER_UNREACHABLE';
  }
  return 'OTHER';
}
