import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { CacheStatus, CacheStore, TokenBucketResult } from './store.js';
import { storableTtl } from './ttl.js';

export interface RedisStoreOptions {
  /** `redis://` or `rediss://` (TLS); may carry credentials and a DB number. Never logged. */
  readonly url: string;
  /** Prepended to every key (ioredis `keyPrefix`): one Redis can serve several gateways or test suites. */
  readonly keyPrefix: string;
  /** Longest wait for one command before it counts as a miss. */
  readonly commandTimeoutMs?: number;
  readonly logger?: Logger;
}

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

/**
 * A CacheStore on one Redis. Every command either answers within the command timeout or counts as a miss
 * (`undefined` / `false`); nothing waits for a reconnect, nothing is queued while disconnected, and the client
 * reconnects by itself with capped backoff.
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  assertSupportedUrl(options.url);
  const log = options.logger?.child({ component: 'redis-cache' });
  const client = new Redis(options.url, clientOptions(options));
  client.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE_TOKEN_SCRIPT });
  // True from the first failure until the next success: one warning per outage, not one per command.
  let degraded = false;

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
  client.on('ready', succeeded);

  return {
    async get(key) {
      try {
        const value = await client.get(key);
        succeeded();
        return value ?? undefined;
      } catch (error) {
        failed('get', error);
        return undefined;
      }
    },
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
    async takeToken(key, bucket, nowMs) {
      try {
        const reply = await (client as Redis & TakeTokenCommand).takeToken(key, bucket.capacity, Math.ceil(bucket.refillMs), Math.floor(nowMs));
        succeeded();
        return bucketResult(reply);
      } catch (error) {
        failed('takeToken', error);
        return undefined;
      }
    },
    status(): CacheStatus {
      if (degraded) return { backend: 'redis', state: 'unavailable' };
      return { backend: 'redis', state: client.status === 'ready' ? 'ready' : 'connecting' };
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

interface TakeTokenCommand {
  takeToken(key: string, capacity: number, refillMs: number, nowMs: number): Promise<unknown>;
}

function bucketResult(reply: unknown): TokenBucketResult | undefined {
  if (!Array.isArray(reply)) return undefined;
  const [allowed, retryAfterMs] = reply as unknown[];
  if (allowed === 1) return { allowed: true };
  return typeof retryAfterMs === 'number' ? { allowed: false, retryAfterMs } : undefined;
}

function clientOptions(options: RedisStoreOptions): RedisOptions {
  return {
    keyPrefix: options.keyPrefix,
    // Fail commands at once while disconnected instead of queueing them without bound.
    enableOfflineQueue: false,
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    // 0: commands in flight when the connection drops fail immediately instead of waiting for a reconnect, and
    // are not re-sent later (a late SET would outlive the TTL it was computed for).
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Connect in the background now, so /readyz reports a state and the first request can already hit.
    lazyConnect: false,
    retryStrategy: reconnectDelay,
    // After a failover a DNS name may point at the new primary while this connection still talks to a replica.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  };
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
  if (message.startsWith("Stream isn't writeable") || message.startsWith('Connection is closed')) return 'NOT_CONNECTED';
  return 'OTHER';
}
