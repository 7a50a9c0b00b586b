import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';

const PACKAGES = [
  'fastify',
  '@fastify/reply-from',
  'undici',
  'jose',
  'pino',
  'ioredis',
  'lru-cache',
  '@modelcontextprotocol/sdk',
  'tsx',
] as const;

export interface Environment {
  readonly machine: {
    readonly cpu_model: string;
    readonly cores: number;
    readonly memory_gb: number;
    readonly kernel: string;
    /** 1, 5 and 15 minute load averages when the run started: above ~0.6 the figures are noisy. */
    readonly load_before: string;
  };
  readonly node: string;
  readonly redis: string;
  readonly gateway: { readonly version: string; readonly commit: string; readonly src_modified: boolean };
  readonly packages: Readonly<Record<string, string>>;
}

export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

const version = (pkg: string): string => {
  try {
    return (JSON.parse(readFileSync(`node_modules/${pkg}/package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
};

const run = (command: string, args: readonly string[]): string => {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
};

export function describeEnvironment(): Environment {
  const cpuList = cpus();
  return {
    machine: {
      cpu_model: cpuList[0]?.model ?? 'unknown',
      cores: cpuList.length,
      memory_gb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      kernel: release(),
      load_before: loadAverage(),
    },
    node: process.version,
    redis: run('redis-server', ['--version']).replace(/^Redis server /, ''),
    gateway: {
      version: (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version,
      commit: run('git', ['rev-parse', '--short', 'HEAD']),
      src_modified: run('git', ['status', '--porcelain', '--', 'src']) !== '',
    },
    packages: Object.fromEntries(PACKAGES.map((pkg) => [pkg, version(pkg)])),
  };
}
