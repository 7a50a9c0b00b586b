import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { runLoad } from './load.js';
import { pinProcess, sampleProcess } from './processes.js';
import { loadScenarios, MODES, mintTokens, type LoadScenario } from './scenarios.js';
import { CLIENT_CORE, startStack, type Stack } from './stack.js';

/**
 * Compares gateway builds on one machine: one gateway per build (same config, ports of their own) and the bare
 * fastify + reply-from proxy (`--reference undici`: the node:http + undici Pool one) are loaded at the same time, 64 connections each, all on the servers' core, so a noisy
 * neighbour hits them all alike; CPU per request is read per process. Prints each build's CPU per request and its
 * ratio to the reference proxy per round, then the medians. For judging a change to the hot path on a noisy
 * machine; `npm run bench` stays the record (it loads one proxy at a time).
 *
 *   npx tsx bench/ab.ts --rounds 6 path/to/before/main.js dist/main.js
 *
 * `--mode c1` compares latency instead: one connection per target, the targets one after another within a round
 * (their order rotating), each round's added p50 (p50 − the direct p50 of that round) as a ratio to reply-from's.
 *
 * A build outside this checkout must still find node_modules: copy `dist/` to a folder inside it (git-ignored).
 * An entry written `dist/main.js@traces=0.1` runs with `telemetry.traces` at that sample ratio, exporting to a sink
 * in this process that answers every export at once (what the gateway pays, not what a collector does).
 */
const usage =
  'usage: tsx bench/ab.ts [--rounds N] [--mode c64|c1] [--scenario jwt-reused] [--reference reply-from|undici] [--ms 3000] [--gateway-flags=F] <main.js[@traces=RATIO]> ...';
const { values, positionals: entries } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '6' },
    mode: { type: 'string', default: 'c64' },
    scenario: { type: 'string', default: 'jwt-reused' },
    ms: { type: 'string', default: '3000' },
    'gateway-flags': { type: 'string' },
    reference: { type: 'string', default: 'reply-from' },
  },
});
if (entries.length === 0 || (values.mode !== 'c64' && values.mode !== 'c1')) throw new Error(usage);
if (values.reference !== 'reply-from' && values.reference !== 'undici') throw new Error(usage);
/** The reference proxy loaded beside the builds: bare fastify + reply-from (default), or node:http + undici Pool. */
const referenceName = values.reference === 'undici' ? 'undici-pool' : 'reply-from';

/** `path@traces=RATIO`: the build at `path`, traced at that sample ratio. */
function parseEntry(entry: string): { readonly path: string; readonly tracesRatio: number | undefined } {
  const [path = '', option] = entry.split('@traces=');
  const tracesRatio = option === undefined ? undefined : Number(option);
  if (tracesRatio !== undefined && !(tracesRatio >= 0 && tracesRatio <= 1)) throw new Error(`${entry}: traces ratio must be 0..1 (${usage})`);
  return { path, tracesRatio };
}
const builds = entries.map(parseEntry);
for (const { path } of builds) if (!existsSync(path)) throw new Error(`${path}: no such file (${usage})`);
if (builds[0]?.tracesRatio !== undefined) throw new Error(`the first entry runs untraced (${usage})`);
const rounds = Number(values.rounds);
const durationMs = Number(values.ms);
const WARMUP_MS = 4_000;
const MAX_REQUESTS = 10_000_000;

interface Target {
  readonly pid: number;
  readonly origin: string;
  readonly scenario: LoadScenario;
}

/** CPU µs per request of every target, all loaded at once for `ms` at 64 connections each. */
async function cpuPerRequest(targets: readonly Target[], ms: number): Promise<number[]> {
  const before = targets.map((target) => sampleProcess(target.pid));
  const results = await Promise.all(
    targets.map(({ origin, scenario }) =>
      runLoad({ origin, mode: MODES.c64, durationMs: ms, maxRequests: MAX_REQUESTS, request: scenario.request, expectStatus: scenario.expectStatus }),
    ),
  );
  return targets.map((target, index) => {
    const result = results[index];
    if (!result || result.failed > 0) throw new Error(`${target.scenario.id}: requests failed (${JSON.stringify(result?.statuses)})`);
    return (sampleProcess(target.pid).cpuUs - (before[index]?.cpuUs ?? 0)) / result.ok;
  });
}

interface OneConnection {
  readonly p50: number;
  /** The target process's CPU µs per request: at one connection, most of it lies on the request's path. */
  readonly cpu: number;
}

/** p50 latency in µs of each target, loaded one after another (starting with `first`) at one connection. */
async function p50OneByOne(targets: readonly Target[], ms: number, first: number): Promise<OneConnection[]> {
  const measured: OneConnection[] = targets.map(() => ({ p50: NaN, cpu: NaN }));
  for (let step = 0; step < targets.length; step += 1) {
    const index = (first + step) % targets.length;
    const { pid, origin, scenario } = targets[index] as Target;
    const before = sampleProcess(pid).cpuUs;
    const result = await runLoad({ origin, mode: MODES.c1, durationMs: ms, maxRequests: MAX_REQUESTS, request: scenario.request, expectStatus: scenario.expectStatus });
    if (result.failed > 0) throw new Error(`${scenario.id}: requests failed (${JSON.stringify(result.statuses)})`);
    measured[index] = { p50: result.histogram.percentile(50) / 1000, cpu: (sampleProcess(pid).cpuUs - before) / result.ok };
  }
  return measured;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** `--mode c64`: CPU per request of each build, all loaded at once, as a ratio to the reference's. */
async function compareCpu(targets: readonly Target[]): Promise<void> {
  // Every process shares one core with the others: each gets its share of the warm-up.
  await cpuPerRequest(targets, WARMUP_MS * targets.length);
  const cpu: number[][] = targets.map(() => []);
  for (let round = 1; round <= rounds; round += 1) {
    const measured = await cpuPerRequest(targets, durationMs);
    measured.forEach((value, index) => cpu[index]?.push(value));
    const [referenceCpu = NaN, ...gatewayCpu] = measured;
    console.log(`round ${round}: ${referenceName} ${referenceCpu.toFixed(1)} µs  ${gatewayCpu.map((value, index) => `#${index} ${value.toFixed(1)} µs ×${(value / referenceCpu).toFixed(2)}`).join('  ')}`);
  }
  const referenceMedian = median(cpu[0] ?? []);
  console.log(`${referenceName}: median ${referenceMedian.toFixed(1)} µs/req`);
  entries.forEach((entry, index) => {
    const own = cpu[index + 1] ?? [];
    const ratios = own.map((value, round) => value / (cpu[0]?.[round] ?? NaN));
    const versusFirst = own.map((value, round) => value / (cpu[1]?.[round] ?? NaN));
    console.log(`#${index} ${entry}: median ${median(own).toFixed(1)} µs/req, ×${median(ratios).toFixed(3)} ${referenceName}, ×${median(versusFirst).toFixed(3)} #0 (medians of ${rounds} rounds)`);
  });
}

/** `--mode c1`: added p50 at one connection of each build, as a ratio to the reference's, per round and in medians. */
async function compareLatency(targets: readonly Target[], direct: Target): Promise<void> {
  const all = [direct, ...targets];
  await p50OneByOne(all, WARMUP_MS, 0);
  const added: number[][] = targets.map(() => []);
  const cpu: number[][] = targets.map(() => []);
  for (let round = 1; round <= rounds; round += 1) {
    const [direct = { p50: NaN, cpu: NaN }, ...measured] = await p50OneByOne(all, durationMs, round % all.length);
    measured.forEach((value, index) => {
      added[index]?.push(value.p50 - direct.p50);
      cpu[index]?.push(value.cpu);
    });
    const [referenceAdded = NaN, ...gatewayAdded] = measured.map((value) => value.p50 - direct.p50);
    console.log(`round ${round}: direct p50 ${direct.p50.toFixed(1)} µs, added: ${referenceName} ${referenceAdded.toFixed(1)} µs  ${gatewayAdded.map((value, index) => `#${index} ${value.toFixed(1)} µs ×${(value / referenceAdded).toFixed(2)}`).join('  ')}`);
  }
  const ratiosTo = (own: readonly number[], reference: readonly number[]): number[] => own.map((value, round) => value / (reference[round] ?? NaN));
  console.log(`${referenceName}: median added p50 ${median(added[0] ?? []).toFixed(1)} µs, CPU ${median(cpu[0] ?? []).toFixed(1)} µs/req`);
  entries.forEach((entry, index) => {
    const ownAdded = added[index + 1] ?? [];
    const ownCpu = cpu[index + 1] ?? [];
    console.log(
      `#${index} ${entry}: median added p50 ${median(ownAdded).toFixed(1)} µs, ×${median(ratiosTo(ownAdded, added[0] ?? [])).toFixed(3)} ${referenceName}; ` +
        `CPU ${median(ownCpu).toFixed(1)} µs/req, ×${median(ratiosTo(ownCpu, cpu[0] ?? [])).toFixed(3)} (medians of ${rounds} rounds)`,
    );
  });
}

/** An OTLP/HTTP endpoint that takes every export and answers at once. */
async function startOtlpSink(): Promise<{ readonly url: string; close(): void }> {
  const sink = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end('{}'));
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`, close: () => sink.close() };
}

pinProcess(CLIENT_CORE);
const otlpSink = await startOtlpSink();
const tracesYaml = (ratio: number | undefined): string =>
  ratio === undefined ? '' : `telemetry: { traces: { otlp_endpoint: "${otlpSink.url}", sample_ratio: ${ratio} } }\n`;
// Extra node flags for every build's gateway, space separated (e.g. --gateway-flags="--cpu-prof --cpu-prof-dir=DIR").
const nodeArgs = values['gateway-flags']?.split(' ').filter(Boolean) ?? [];
const stack: Stack = await startStack({ gatewayEntry: builds[0]?.path as string, nodeArgs });
try {
  const tokens = await mintTokens(stack, 1);
  const scenarios = loadScenarios({ stack, tokens, calcSessions: { direct: '', gateway: '' } });
  const find = (id: string): LoadScenario => {
    const found = scenarios.find((scenario) => scenario.id === id);
    if (!found) throw new Error(`no scenario ${id}`);
    return found;
  };
  const scenario = find(values.scenario);
  const gateways = [stack.gateway];
  for (const { path, tracesRatio } of builds.slice(1)) gateways.push(await stack.extraGateway(path, tracesYaml(tracesRatio)));
  const reference = stack.references[referenceName];
  const targets: Target[] = [
    { pid: reference.pid, origin: reference.origin, scenario: find(`ref-${referenceName}`) },
    ...gateways.map((gateway) => ({ pid: gateway.pid, origin: gateway.origin, scenario })),
  ];
  if (values.mode === 'c1') await compareLatency(targets, { pid: stack.upstream.pid, origin: stack.upstream.origin, scenario: find('direct') });
  else await compareCpu(targets);
} finally {
  await stack.stop();
  otlpSink.close();
}
