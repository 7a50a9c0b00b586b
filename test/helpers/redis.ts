import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './net.js';

/** A real Redis for one suite. Give each store its own `uniquePrefix()` so suites sharing a REDIS_URL never collide. */
export interface RedisHandle {
  readonly url: string;
  stop(): Promise<void>;
  /** Spawned servers only: SIGKILL, no shutdown. */
  kill?(): Promise<void>;
}

/** A redis-server child process this suite owns, for fault tests. */
export interface SpawnedRedis extends RedisHandle {
  readonly port: number;
  kill(): Promise<void>;
  /** A fresh, empty server on the same port (after `kill()`). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server keeps its connections but stops answering. */
  freeze(): void;
  thaw(): void;
}

const DOCKER_CHECK_MS = 2_000;
const PING_ATTEMPTS = 200;
const PING_INTERVAL_MS = 25;

/** `REDIS_URL` when set; else testcontainers when a Docker engine answers; else a spawned `redis-server`. */
export async function startRedis(): Promise<RedisHandle> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) return { url: fromEnv, stop: () => Promise.resolve() };
  return (await startContainer()) ?? (await spawnRedis());
}

export function uniquePrefix(suite: string): string {
  return `test:${suite}:${randomUUID().slice(0, 8)}:`;
}

/** Always spawns `redis-server` on a free port (fault tests need a process they can kill, whatever REDIS_URL says). */
export async function spawnRedis(extraArgs: readonly string[] = []): Promise<SpawnedRedis> {
  const port = await freePort();
  let child = await launch(port, extraArgs);
  // A crashed test run must not leave servers behind.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: () => terminate(child, 'SIGKILL'),
    async restart() {
      child = await launch(port, extraArgs);
    },
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
    async stop() {
      child.kill('SIGCONT');
      await terminate(child, 'SIGTERM');
      process.off('exit', killOnExit);
    },
  };
}

/** A spawned Redis Sentinel watching one primary (quorum 1), for Sentinel-mode tests. */
export interface SpawnedSentinel {
  readonly port: number;
  /** The master group name it monitors. */
  readonly name: string;
  stop(): Promise<void>;
}

export interface SentinelSetup {
  readonly name?: string;
  /** `requirepass` of the primary (the sentinel authenticates with it). */
  readonly masterPassword?: string;
  /** `requirepass` of the sentinel itself. */
  readonly sentinelPassword?: string;
  /** How long the primary may not answer before the sentinel fails over (Redis's default: 30 s). */
  readonly downAfterMs?: number;
}

/** `redis-server <conf> --sentinel` monitoring `master`; resolves once it names the primary's address. */
export async function spawnSentinel(master: SpawnedRedis, setup: SentinelSetup = {}): Promise<SpawnedSentinel> {
  const name = setup.name ?? 'mymaster';
  const dir = await mkdtemp(join(tmpdir(), 'mcpgw-sentinel-'));
  const conf = join(dir, 'sentinel.conf');
  // The sentinel rewrites its config file, so it lives in a directory this suite owns.
  await writeFile(conf, [
    `dir ${dir}`,
    `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
    ...(setup.masterPassword === undefined ? [] : [`sentinel auth-pass ${name} ${setup.masterPassword}`]),
    ...(setup.sentinelPassword === undefined ? [] : [`requirepass ${setup.sentinelPassword}`]),
    ...(setup.downAfterMs === undefined
      ? []
      : [`sentinel down-after-milliseconds ${name} ${setup.downAfterMs}`, `sentinel failover-timeout ${name} ${setup.downAfterMs * 10}`]),
    '',
  ].join('\n'));
  const port = await freePort();
  const child = await launch(port, [], [conf, '--sentinel']);
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async (): Promise<void> => {
    await terminate(child, 'SIGTERM');
    process.off('exit', killOnExit);
    await rm(dir, { recursive: true, force: true });
  };
  const client = new Redis({ port, host: '127.0.0.1', password: setup.sentinelPassword, lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await pollUntil(async () => {
      const address = (await client.call('SENTINEL', 'get-master-addr-by-name', name)) as string[] | null;
      return address?.[1] === String(master.port);
    }, `sentinel on port ${port} does not know ${name}`);
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.disconnect();
  }
  return { port, name, stop };
}

/** A Redis Cluster of spawned nodes, all 16384 slots assigned. */
export interface SpawnedCluster {
  /** Every node; which are masters is for `CLUSTER NODES` to say (redis-cli spreads them). */
  readonly ports: readonly number[];
  /** SIGKILL one node, for failover tests. */
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterSetup {
  /** Replicas per master (default 0): a killed master's replica takes over. */
  readonly replicas?: number;
  /** `cluster-node-timeout` (Redis's default: 15 s): how long a node may not answer before it counts as failed. */
  readonly nodeTimeoutMs?: number;
}

/**
 * `size` masters with `cluster-enabled yes` (and `replicas` replicas each), joined by `redis-cli --cluster create`;
 * resolves once every node's `CLUSTER INFO` says `cluster_state:ok`.
 */
export async function spawnCluster(size = 3, password?: string, setup: ClusterSetup = {}): Promise<SpawnedCluster> {
  const replicas = setup.replicas ?? 0;
  const timeout = setup.nodeTimeoutMs === undefined ? [] : ['--cluster-node-timeout', String(setup.nodeTimeoutMs)];
  const dir = await mkdtemp(join(tmpdir(), 'mcpgw-cluster-'));
  const auth = password === undefined ? [] : ['--requirepass', password, '--masterauth', password];
  const nodes: { port: number; child: ChildProcess }[] = [];
  const killOnExit = (): void => nodes.forEach(({ child }) => child.kill('SIGKILL'));
  process.once('exit', killOnExit);
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map(({ child }) => terminate(child, 'SIGTERM')));
    process.off('exit', killOnExit);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < size * (1 + replicas); index += 1) {
      const port = await freePort();
      // The bus port is chosen too: port + 10000 (the default) may be taken or beyond 65535.
      const busPort = await freePort();
      const child = await launch(port, [
        '--cluster-enabled', 'yes',
        '--cluster-port', String(busPort),
        '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--dir', dir,
        ...timeout,
        ...auth,
      ]);
      nodes.push({ port, child });
    }
    const cliAuth = password === undefined ? [] : ['-a', password, '--no-auth-warning'];
    const replicaArgs = replicas === 0 ? [] : ['--cluster-replicas', String(replicas)];
    await run('redis-cli', [...cliAuth, '--cluster', 'create', ...nodes.map(({ port }) => `127.0.0.1:${port}`), ...replicaArgs, '--cluster-yes']);
    await Promise.all(nodes.map(({ port }) => waitForClusterOk(port, password)));
  } catch (error) {
    await stop();
    throw error;
  }
  const kill = async (port: number): Promise<void> => {
    const node = nodes.find((candidate) => candidate.port === port);
    if (node) await terminate(node.child, 'SIGKILL');
  };
  return { ports: nodes.map(({ port }) => port), kill, stop };
}

async function waitForClusterOk(port: number, password: string | undefined): Promise<void> {
  const client = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await pollUntil(
      async () => String(await client.call('CLUSTER', 'INFO')).includes('cluster_state:ok'),
      `cluster node on port ${port} never reached cluster_state:ok`,
    );
  } finally {
    client.disconnect();
  }
}

/** Bounded polling of a state (never a sleep standing in for synchronisation); errors count as "not yet". */
async function pollUntil(check: () => Promise<boolean>, failure: string): Promise<void> {
  for (let attempt = 0; attempt < PING_ATTEMPTS; attempt += 1) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, PING_INTERVAL_MS * 4));
  }
  throw new Error(failure);
}

function run(command: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 30_000 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${command} failed: ${stderr.trim() || error.message}`));
      else resolve();
    });
  });
}


async function startContainer(): Promise<RedisHandle | undefined> {
  if (!dockerSocketPresent()) return undefined;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await withTimeout(getContainerRuntimeClient(), DOCKER_CHECK_MS);
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine').start();
    return {
      url: container.getConnectionUrl(),
      stop: async () => {
        await container.stop();
      },
    };
  } catch {
    return undefined;
  }
}

/** Cheap pre-check so machines without Docker never wait for testcontainers' runtime discovery. */
function dockerSocketPresent(): boolean {
  if (process.env.DOCKER_HOST) return true;
  const runtimeDir = process.env.XDG_RUNTIME_DIR;
  return existsSync('/var/run/docker.sock') || (runtimeDir !== undefined && existsSync(join(runtimeDir, 'docker.sock')));
}

async function launch(port: number, extraArgs: readonly string[], leadingArgs: readonly string[] = []): Promise<ChildProcess> {
  const args = [...leadingArgs, '--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', ...extraArgs];
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) => reject(new Error(`cannot start redis-server: ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited early (code ${code})`)));
  });
  failed.catch(() => undefined);
  await Promise.race([waitForPing(port), failed]);
  return child;
}

async function waitForPing(port: number): Promise<void> {
  for (let attempt = 0; attempt < PING_ATTEMPTS; attempt += 1) {
    if (await ping(port)) return;
    await new Promise((resolve) => setTimeout(resolve, PING_INTERVAL_MS));
  }
  throw new Error(`redis-server on port ${port} did not answer PING`);
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    // A password-protected server answers NOAUTH: it is up all the same.
    socket.once('data', (data) => done(/^(\+PONG|-NOAUTH)/.test(data.toString())));
  });
}

function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}


function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
