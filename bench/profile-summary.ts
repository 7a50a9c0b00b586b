import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/**
 * Summarises a V8 .cpuprofile of the gateway (from `npm run bench -- --cpu-prof DIR`): time by concern (logging,
 * metrics, token verification, proxying, ...), self time by package/file and by function, and inclusive time of
 * the gateway's own functions. Samples taken while modules load are left out. Shares of busy time are robust to a
 * noisy machine; with `--requests N` the times are also divided per request.
 *
 *   tsx bench/profile-summary.ts DIR/CPU.*.cpuprofile [--top 30] [--requests N]
 */
interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** node_modules/<pkg> (scoped too), src|dist/<file>, node:<internal>, or the V8 pseudo-frames ((garbage collector), ...). */
export function groupOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1] !== undefined) return pkg[1];
  const own = /\/((?:src|dist|bench|examples)\/.+)$/.exec(url);
  if (own?.[1] !== undefined) return own[1].replace(/^dist\//, 'src/').replace(/\.js$/, '.ts');
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '');
}

interface Concern {
  readonly name: string;
  /** Sticky concerns own a sample wherever they appear on its stack (a log call's socket write is logging). */
  readonly sticky: boolean;
  readonly matches: (group: string, frame: CallFrame) => boolean;
}

const CONCERNS: readonly Concern[] = [
  { name: 'logging (pino, redaction, writes)', sticky: true, matches: (group) => /^(pino|@pinojs\/|sonic-boom|fast-redact|pino-std-serializers)/.test(group) },
  { name: 'metrics (prom-client)', sticky: true, matches: (group) => group === 'prom-client' || group === 'src/observability/metrics.ts' },
  { name: 'token verification (jose, cache, hash)', sticky: true, matches: (group) => group === 'jose' || /^src\/auth\/(jwt-verifier|jwks-source|introspection|route-verifier)/.test(group) || group === 'src/cache/cache-keys.ts' },
  { name: 'cache store (ioredis / LRU)', sticky: true, matches: (group) => group === 'ioredis' || group === 'lru-cache' || /^src\/cache\//.test(group) },
  { name: 'JSON-RPC inspection and policy', sticky: true, matches: (group) => /^src\/policy\//.test(group) },
  { name: 'header filtering', sticky: true, matches: (group) => group === 'src/proxy/headers.ts' },
  { name: 'garbage collection', sticky: false, matches: (group) => group === '(garbage collector)' },
  { name: 'undici client (to upstream)', sticky: false, matches: (group) => group === 'undici' || group.startsWith('wasm://') },
  { name: '@fastify/reply-from', sticky: false, matches: (group) => group === '@fastify/reply-from' },
  { name: 'fastify (routing, hooks, reply)', sticky: false, matches: (group) => /^(fastify|find-my-way|avvio|@fastify\/)/.test(group) },
  { name: 'gateway code (other src/)', sticky: false, matches: (group) => group.startsWith('src/') },
  { name: 'node http, streams, sockets', sticky: false, matches: (group) => group.startsWith('node:') || group === '(native)' },
];
const OTHER = 'other ((program), runtime)';

function main(): void {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '30' }, requests: { type: 'string' } },
  });
  const file = positionals[0];
  if (file === undefined) throw new Error('usage: tsx bench/profile-summary.ts FILE.cpuprofile [--top N] [--requests N]');
  const top = Number(values.top);
  const requests = values.requests === undefined ? undefined : Number(values.requests);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stackOf = (id: number): CallFrame[] => {
    const frames: CallFrame[] = [];
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const frame = byId.get(current)?.callFrame;
      if (frame) frames.push(frame);
    }
    return frames;
  };

  const selfUs = new Map<number, number>();
  let loadingUs = 0;
  profile.samples.forEach((id, index) => {
    const us = profile.timeDeltas[index] ?? 0;
    if (stackOf(id).some((frame) => frame.url.startsWith('node:internal/modules/'))) loadingUs += us;
    else selfUs.set(id, (selfUs.get(id) ?? 0) + us);
  });

  const add = (map: Map<string, number>, key: string, us: number): void => void map.set(key, (map.get(key) ?? 0) + us);
  const byConcern = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byGroup = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const stack = stackOf(id);
    const leaf = stack[0];
    if (!leaf || leaf.functionName === '(idle)') continue;
    busy += us;
    const groups = stack.map((frame) => groupOf(frame.url, frame.functionName));
    const sticky = CONCERNS.find((concern) => concern.sticky && stack.some((frame, index) => concern.matches(groups[index] ?? '', frame)));
    const innermost = stack
      .map((frame, index) => CONCERNS.find((concern) => !concern.sticky && concern.matches(groups[index] ?? '', frame)))
      .find((concern) => concern !== undefined);
    add(byConcern, (sticky ?? innermost)?.name ?? OTHER, us);
    const leafGroup = groups[0] ?? '';
    add(byFunction, `${leaf.functionName || '(anonymous)'}  ${leafGroup}:${leaf.lineNumber + 1}`, us);
    add(byGroup, leafGroup, us);
    const seen = new Set<string>();
    stack.forEach((frame, index) => {
      const group = groups[index] ?? '';
      const key = group.startsWith('src/') ? `${frame.functionName || '(anonymous)'}  ${group}` : `[${group}]`;
      if (seen.has(key)) return;
      seen.add(key);
      add(inclusive, key, us);
    });
  }

  const percent = (us: number): string => `${((us / busy) * 100).toFixed(1).padStart(5)} %`;
  const perRequest = (us: number): string => (requests ? `${(us / requests).toFixed(1).padStart(7)} µs/req  ` : '');
  const list = (title: string, map: Map<string, number>, limit: number): void => {
    process.stdout.write(`\n${title}\n`);
    for (const [key, us] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
      process.stdout.write(`${percent(us)}  ${(us / 1000).toFixed(0).padStart(7)} ms  ${perRequest(us)}${key}\n`);
    }
  };
  process.stdout.write(
    `profile ${file}: ${(busy / 1e6).toFixed(1)} s busy (${perRequest(busy)}percentages of busy time; ` +
      `${(loadingUs / 1e6).toFixed(1)} s of module loading left out)\n`,
  );
  list('by concern (sticky concerns own everything they call)', byConcern, CONCERNS.length + 1);
  list('self time by package / file', byGroup, top);
  list('self time by function', byFunction, top);
  list('inclusive time (own functions and packages)', inclusive, top);
}

main();
