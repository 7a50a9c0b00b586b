import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/** A server the bench started, pinned to one core. */
export interface BenchProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Moves every thread of the process to `core` (the calculator run gives the gateway a core of its own). */
  pin(core: number): void;
  stop(): Promise<void>;
}

/** CPU time (user + system, all threads) in µs and resident set size in bytes, read from /proc. */
export interface ProcessSample {
  readonly cpuUs: number;
  readonly rssBytes: number;
}

const getconf = (name: string): number => Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim());
const CLOCK_TICKS_PER_SECOND = getconf('CLK_TCK');
const PAGE_BYTES = getconf('PAGESIZE');

/** Pins every thread of `pid` (default: this process) to one core. */
export function pinProcess(core: number, pid: number = process.pid): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
}

/**
 * Starts `command` under `taskset -c core` so every thread it creates stays on that core. With `ipc`, the child
 * gets a Node IPC channel (taskset execs, so the channel survives).
 */
export function spawnPinned(
  name: string,
  core: number,
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; ipc?: boolean; logFile?: number } = {},
): BenchProcess {
  const output = options.logFile ?? 'ignore';
  const child = spawn('taskset', ['-c', String(core), command, ...args], {
    stdio: options.ipc ? ['ignore', output, 'inherit', 'ipc'] : ['ignore', output, 'inherit'],
    env: { ...process.env, ...options.env },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  return {
    name,
    pid: child.pid,
    child,
    pin: (to) => pinProcess(to, child.pid),
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A pinned `node --import tsx <script>` child that reports `{ type: 'ready', ...info }` over IPC. */
export async function startNodeServer<Info>(
  name: string,
  core: number,
  script: string,
  args: readonly string[] = [],
  options: { nodeArgs?: readonly string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<BenchProcess & { readonly info: Info }> {
  const handle = spawnPinned(name, core, process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', script, ...args], {
    ipc: true,
    env: options.env,
  });
  const info = await new Promise<Info>((resolve, reject) => {
    handle.child.once('exit', (code) => reject(new Error(`${name} exited before it was ready (code ${code})`)));
    handle.child.on('message', (message: { type?: string } & Info) => {
      if (message.type === 'ready') resolve(message);
    });
  });
  return { ...handle, info };
}

/** Sends `{ type }` to a child and resolves with its first answer of the same type. */
export function ask<Answer>(child: ChildProcess, type: string): Promise<Answer> {
  return new Promise((resolve) => {
    const listener = (message: { type?: string } & Answer): void => {
      if (message.type !== type) return;
      child.off('message', listener);
      resolve(message);
    };
    child.on('message', listener);
    child.send({ type });
  });
}

export function sampleProcess(pid: number): ProcessSample {
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15, rss 24 (proc(5)).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { cpuUs: (ticks / CLOCK_TICKS_PER_SECOND) * 1e6, rssBytes: Number(fields[21]) * PAGE_BYTES };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Polls until `probe` resolves true, at most `timeoutMs`. */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms`);
}

/** Redis answers PING with +PONG. */
export function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString('latin1').startsWith('+PONG'));
    });
    socket.write('PING\r\n');
  });
}
