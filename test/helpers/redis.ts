import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

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

/** A TCP server that accepts connections and never answers: a hung Redis. */
export async function startSilentServer(): Promise<{ readonly url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listen(server);
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on (bound, read, released): connections to it are refused. */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
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

async function launch(port: number, extraArgs: readonly string[]): Promise<ChildProcess> {
  const args = ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', ...extraArgs];
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
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
