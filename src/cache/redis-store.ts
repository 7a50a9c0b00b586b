import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { CacheStatus, CacheStore } from './store.js';
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
 * A CacheStore on one Redis. Every command either answers within the command timeout or counts as a miss
 * (`undefined` / `false`); nothing waits for a reconnect, nothing is queued while disconnected, and the client
 * reconnects by itself with capped backoff.
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  assertSupportedUrl(options.url);
  const log = options.logger?.child({ component: 'redis-cache' });
  const client = new Redis(options.url, clientOptions(options));
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
