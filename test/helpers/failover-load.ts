import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { RedisStore } from '../../src/cache/redis-store.js';
import { startTestIssuer } from './issuer.js';
import { spawnCluster, spawnRedis, spawnSentinel } from './redis.js';
import { INITIALIZE, opensSessions, PING, postMcp, startReplayedGateway, type GatewayCode } from './replayed-gateway.js';
import { startTestUpstream } from './upstream.js';

/**
 * Known MCP sessions under load through a Redis failover (real redis-server / redis-sentinel processes): the share
 * of their requests the gateway refused, and for how long. The gateway's code is passed in, so the same scenario
 * measures this tree and another checkout (bench/store-failover.ts).
 */
export type Topology = 'sentinel' | 'cluster';

export interface FailoverFigures {
  readonly topology: Topology;
  readonly sessions: number;
  /** Requests on known sessions sent from the primary's kill until the end of the run. */
  readonly requests: number;
  /** Of those, answered anything but 200 (by status in `statuses`). */
  readonly refused: number;
  readonly statuses: Readonly<Record<string, number>>;
  /** From the first refusal to the last (0 without refusals). */
  readonly refusalWindowMs: number;
  /** Requests answered within that window (refused or not). */
  readonly requestsInWindow: number;
  /** From the kill until Redis named a promoted replica. */
  readonly promotionMs: number;
}

export interface FailoverOptions {
  readonly sessions?: number;
  /** Requests in flight at once. */
  readonly workers?: number;
  /** Load kept up after the promotion, so late refusals (reconnect backoff) are seen. */
  readonly afterPromotionMs?: number;
}

/** How long a Redis node may not answer before it counts as failed: short, so a run takes seconds. */
const FAILURE_DETECTION_MS = 1_000;
const KEY_SECRET = 'k'.repeat(32);
const REPLICATION_WAIT_MS = 5_000;
const POLL_MS = 50;
const POLL_ATTEMPTS = 600;
/** Requests answered before the kill, so the load is running when Redis goes. */
const WARM_REQUESTS = 200;

interface RedisSetup {
  readonly cache: string;
  /** Every primary's data reached its replica. */
  replicated(): Promise<void>;
  /** Kills a primary; resolves once a replica was promoted in its place. */
  failover(): Promise<void>;
  stop(): Promise<void>;
}

export async function measureFailover(topology: Topology, code: GatewayCode, options: FailoverOptions = {}): Promise<FailoverFigures> {
  const sessionCount = options.sessions ?? 40;
  const [issuer, upstream, redis] = await Promise.all([startTestIssuer(), startTestUpstream(), topology === 'sentinel' ? sentinelSetup() : clusterSetup()]);
  upstream.respondWith(opensSessions);
  const resource = 'https://gw.example.test/calc/mcp';
  const { url, store, gateway } = await startReplayedGateway(
    code,
    `
public_url: https://gw.example.test
cache: { ${redis.cache}, key_secret: "${KEY_SECRET}" }
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
`,
    '/calc/mcp',
  );
  try {
    if (!(await (store as RedisStore).whenReady(10_000))) throw new Error('the gateway did not connect to Redis');
    await gateway.warm();

    const tokens = await Promise.all(Array.from({ length: sessionCount }, (_, index) => issuer.mint({ aud: resource, sub: `user-${index}`, scope: 'mcp:tools' }, { expiresIn: 600 })));
    const post = (index: number, body: string, session?: string) => postMcp(url, tokens[index] ?? '', body, session);
    const sessions: string[] = [];
    for (let index = 0; index < sessionCount; index += 1) {
      const response = await post(index, INITIALIZE);
      const session = response.headers.get('mcp-session-id');
      if (response.status !== 200 || session === null) throw new Error(`initialize answered ${response.status}`);
      sessions.push(session);
    }
    await redis.replicated();

    const answers: { readonly at: number; readonly status: number }[] = [];
    let running = true;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (running) {
        const index = next++ % sessionCount;
        const response = await post(index, PING, sessions[index]);
        answers.push({ at: performance.now(), status: response.status });
      }
    };
    const workers = Array.from({ length: options.workers ?? 8 }, worker);
    await until(() => Promise.resolve(answers.length >= WARM_REQUESTS), 'the load did not start');
    const killedAt = performance.now();
    await redis.failover();
    const promotedAt = performance.now();
    // A measurement window, not a synchronisation: whatever the gateway answers in it is counted.
    await new Promise((resolve) => setTimeout(resolve, options.afterPromotionMs ?? 3_000));
    running = false;
    await Promise.all(workers);

    const during = answers.filter(({ at }) => at >= killedAt);
    const refusals = during.filter(({ status }) => status !== 200);
    const firstRefusal = refusals[0]?.at ?? 0;
    const lastRefusal = refusals.at(-1)?.at ?? 0;
    const statuses: Record<string, number> = {};
    for (const { status } of during) statuses[status] = (statuses[status] ?? 0) + 1;
    return {
      topology,
      sessions: sessionCount,
      requests: during.length,
      refused: refusals.length,
      statuses,
      refusalWindowMs: Math.round(lastRefusal - firstRefusal),
      requestsInWindow: refusals.length === 0 ? 0 : during.filter(({ at }) => at >= firstRefusal && at <= lastRefusal).length,
      promotionMs: Math.round(promotedAt - killedAt),
    };
  } finally {
    await gateway.close();
    await Promise.all([issuer.close(), upstream.close(), redis.stop()]);
  }
}

/** A primary, its replica and one sentinel (quorum 1). */
async function sentinelSetup(): Promise<RedisSetup> {
  const primary = await spawnRedis();
  const replica = await spawnRedis(['--replicaof', '127.0.0.1', String(primary.port)]);
  const replicaClient = new Redis({ port: replica.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  await until(async () => (await replicaClient.info('replication')).includes('master_link_status:up'), 'the replica never synced');
  // Started after the replica linked up, so its first look at the primary finds the replica to promote.
  const sentinel = await spawnSentinel(primary, { downAfterMs: FAILURE_DETECTION_MS });
  const sentinelClient = new Redis({ port: sentinel.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  await until(async () => ((await sentinelClient.call('SENTINEL', 'replicas', sentinel.name)) as unknown[]).length > 0, 'the sentinel never saw the replica');
  const primaryClient = new Redis({ port: primary.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  return {
    cache: `redis_sentinel: { name: ${sentinel.name}, sentinels: ["127.0.0.1:${sentinel.port}"] }`,
    async replicated() {
      await primaryClient.call('WAIT', '1', String(REPLICATION_WAIT_MS));
    },
    async failover() {
      primaryClient.disconnect();
      await primary.kill();
      await until(async () => {
        const address = (await sentinelClient.call('SENTINEL', 'get-master-addr-by-name', sentinel.name)) as string[] | null;
        return address?.[1] === String(replica.port);
      }, 'the sentinel never promoted the replica');
    },
    async stop() {
      for (const client of [replicaClient, sentinelClient, primaryClient]) client.disconnect();
      await sentinel.stop();
      await Promise.all([primary.stop(), replica.stop()]);
    },
  };
}

/** Three masters with a replica each. */
async function clusterSetup(): Promise<RedisSetup> {
  const cluster = await spawnCluster(3, undefined, { replicas: 1, nodeTimeoutMs: FAILURE_DETECTION_MS });
  const clients = new Map(cluster.ports.map((port) => [port, new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 })]));
  const client = (port: number): Redis => clients.get(port) as Redis;
  const masters = async (asking: number): Promise<number[]> => {
    const nodes = String(await client(asking).call('CLUSTER', 'NODES')).split('\n');
    return nodes
      .filter((line) => {
        const flags = line.split(' ')[2]?.split(',') ?? [];
        return flags.includes('master') && !flags.some((flag) => flag.startsWith('fail'));
      })
      .map((line) => Number(/:(\d+)@/.exec(line)?.[1]));
  };
  // Roles are read when they matter, not once at setup: on a loaded machine the cluster may fail over on its own
  // between setup and the test's writes, and WAIT on a node that became a replica is an error.
  const currentMasters = async (): Promise<number[]> => {
    const roles = await Promise.all(cluster.ports.map(async (port) => [port, await client(port).call('ROLE')] as const));
    return roles.filter(([, role]) => Array.isArray(role) && role[0] === 'master').map(([port]) => port);
  };
  return {
    cache: `redis_cluster: { nodes: [${cluster.ports.map((port) => `"127.0.0.1:${port}"`).join(', ')}] }`,
    async replicated() {
      for (const port of await currentMasters()) await client(port).call('WAIT', '1', String(REPLICATION_WAIT_MS));
    },
    async failover() {
      const mastersBefore = await currentMasters();
      const victim = mastersBefore[0];
      if (victim === undefined) throw new Error('no master');
      client(victim).disconnect();
      await cluster.kill(victim);
      const survivor = cluster.ports.find((port) => port !== victim) ?? victim;
      await until(async () => {
        const info = String(await client(survivor).call('CLUSTER', 'INFO'));
        const now = await masters(survivor);
        return info.includes('cluster_state:ok') && now.length === mastersBefore.length && !now.includes(victim);
      }, 'the cluster never promoted the replica');
    },
    async stop() {
      for (const redisClient of clients.values()) redisClient.disconnect();
      await cluster.stop();
    },
  };
}

/** Bounded polling of a state; errors count as "not yet". */
async function until(check: () => Promise<boolean>, failure: string): Promise<void> {
  for (let attempt = 0; attempt < POLL_ATTEMPTS; attempt += 1) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(failure);
}
