import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';

/** Output kept in memory per process; the rest goes only to its log file. */
const MAX_KEPT_OUTPUT = 256 * 1024;
const KILL_GRACE_MS = 2_000;

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  /** stdout and stderr interleaved. */
  readonly output: string;
  readonly timedOut: boolean;
}

export interface Started {
  readonly child: ChildProcess;
  /** Output so far (stdout and stderr interleaved, bounded). */
  output(): string;
  /** stdout so far (bounded). */
  stdout(): string;
  /** Resolves once `pattern` appears in the output; rejects when the process exits first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** Ends the whole process group (the client and anything it started), SIGKILL after a grace period. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Every byte of output, for reading after a failure. */
  readonly logFile: string;
  readonly stdin?: string;
}

/** Every process group this run started, so that nothing outlives it however it ends. */
const running = new Set<Started>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Starts `command` in its own process group (so stopping it also stops its children). */
export function start(command: string, args: readonly string[], options: SpawnOptions): Started {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  const log = createWriteStream(options.logFile);
  let output = '';
  let stdout = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    log.write(chunk);
    if (output.length < MAX_KEPT_OUTPUT) output += chunk.toString('utf8');
    for (const waiter of waiters) waiter();
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    if (stdout.length < MAX_KEPT_OUTPUT) stdout += chunk.toString('utf8');
    onData(chunk);
  });
  child.stderr?.on('data', onData);
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.once('error', (error) => onData(Buffer.from(`\n[spawn error] ${error.message}\n`)));
  void exited.then(() => {
    log.end();
    for (const waiter of waiters) waiter();
  });

  const started: Started = {
    child,
    output: () => output,
    stdout: () => stdout,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (match !== null) {
            waiters.delete(check);
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check);
            reject(new Error(`${command} exited (${child.exitCode ?? child.signalCode}) before printing ${pattern.source}`));
          }
        };
        waiters.add(check);
        check();
      }),
    stop: async () => {
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
      await exited;
      clearTimeout(timer);
      // Children that ignored SIGTERM while their parent exited.
      killGroup(child, 'SIGKILL');
      running.delete(started);
    },
  };
  running.add(started);
  return started;
}

/** Runs `command` to completion, or stops it after `timeoutMs`. */
export async function run(command: string, args: readonly string[], options: SpawnOptions & { timeoutMs: number }): Promise<Finished> {
  const started = start(command, args, options);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void started.stop();
  }, options.timeoutMs);
  const code = await new Promise<number | null>((resolve) => started.child.once('close', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  await started.stop();
  return { code, stdout: started.stdout(), output: started.output(), timedOut };
}

/** Stops every process this run started that is still running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((started) => started.stop()));
}
