import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt } from './build.js';
import { describeEnvironment, loadAverage } from './environment.js';
import { runLoad, summarize } from './load.js';
import { ask, pinProcess, sampleProcess } from './processes.js';
import { formatRounds, formatRows, formatSpecial, formatTargets, renderSvg } from './report.js';
import { aggregate, type RunRecord } from './results.js';
import { roundOrder, summarizeRounds } from './rounds.js';
import {
  loadScenarios,
  mintTokens,
  MODES,
  openCalculatorSession,
  SSE_HEADERS,
  unknownKidRequest,
  type LoadScenario,
  type ModeName,
  type Tokens,
} from './scenarios.js';
import { openEventStreams, readEventStream, type StreamCheck } from './sse.js';
import { CLIENT_CORE, ROUTES, SERVER_CORE, startStack, type Stack } from './stack.js';
import { evaluateTargets, type KidStormRun, type SpecialResults, type SseOpenResult, type SseOpenSample } from './targets.js';

const HELP = `npm run bench [-- options]   (tsx bench/run.ts)

Measures the gateway against a direct connection to the same upstream on this machine: load generator pinned to
core ${CLIENT_CORE}, servers to core ${SERVER_CORE}. Writes bench/results/latest.json and latest.svg.

  --quick            reduced set, about two minutes
  --rounds N         rounds (default 5): every round runs every scenario once, the compared ones back to back
                     in an order rotating per round; verdicts are medians of per-round ratios (--reps N: the same)
  --only a,b         only these scenario ids (direct baselines are added)
  --modes c1,c64     only these modes (c1, c64, r1000, r2000)
  --cpu-prof DIR     run the gateway under node --cpu-prof, profile written to DIR on exit (the reference
                     proxies' to DIR/reference-<kind>/)
                     (summarise it with: tsx bench/profile-summary.ts DIR/CPU.*.cpuprofile)
  --gateway-flags=F  extra node flags for the gateway, space separated (e.g. --gateway-flags="--trace-gc")
  --gateway-log FILE keep the gateway's log (default: discarded)
  --tsx              run src/main.ts under tsx instead of the compiled dist/main.js (built when older than src/)
  --no-write         print only; leave bench/results alone
`;

interface Settings {
  readonly quick: boolean;
  readonly reps: number;
  readonly durationMs: Readonly<Record<ModeName, number>>;
  readonly warmupMs: number;
  /** Once per scenario before the first repetition: V8 needs thousands of requests to optimise the hot path. */
  readonly firstWarmupMs: number;
  /** Distinct tokens for the fresh-token scenario: more than the verified-token cache (10,000) holds. */
  readonly freshPool: number;
  readonly stormMs: number;
  readonly sseEvents: number;
  readonly sseStreams: number;
}

const FULL: Settings = {
  quick: false,
  reps: 5,
  durationMs: { c1: 3_000, c64: 4_000, r1000: 5_000, r2000: 5_000 },
  warmupMs: 1_000,
  firstWarmupMs: 4_000,
  freshPool: 30_000,
  stormMs: 3_000,
  sseEvents: 10_000,
  sseStreams: 1_000,
};

const QUICK: Settings = {
  quick: true,
  reps: 5,
  durationMs: { c1: 600, c64: 1_000, r1000: 1_200, r2000: 1_200 },
  warmupMs: 300,
  firstWarmupMs: 800,
  freshPool: 0,
  stormMs: 1_000,
  sseEvents: 10_000,
  sseStreams: 1_000,
};

/** No closed-loop run sends more than this, whatever its duration. */
const MAX_CLOSED_REQUESTS = 2_000_000;
/** The default `jwks_cooldown` the bench stack runs with. */
const JWKS_COOLDOWN_MS = 5_000;
const STREAM_OPEN_TIMEOUT_MS = 30_000;
/** Lets the gateway finish the work of opening the streams before its RSS is read. */
const STREAMS_SETTLE_MS = 1_000;
const RESULTS_DIR = 'bench/results';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

function targetOf(stack: Stack, scenario: LoadScenario) {
  const upstream = scenario.upstream === 'calculator' ? stack.calculator : stack.upstream;
  if (scenario.via === 'decision') return { upstream, proxy: stack.gateway, origin: stack.gateway.decisionOrigin };
  const proxy = scenario.via === 'direct' ? undefined : scenario.via === 'gateway' ? stack.gateway : stack.references[scenario.via];
  return { upstream, proxy, origin: proxy?.origin ?? upstream.origin };
}

/** 64 connections for `ms`, results dropped: brings every process on the path to its optimised steady state. */
async function warmUp(stack: Stack, scenario: LoadScenario, ms: number): Promise<void> {
  const { origin } = targetOf(stack, scenario);
  await scenario.prepare?.();
  await runLoad({ origin, mode: MODES.c64, durationMs: ms, maxRequests: MAX_CLOSED_REQUESTS, request: scenario.request, expectStatus: scenario.expectStatus });
}

async function measure(stack: Stack, scenario: LoadScenario, mode: ModeName, settings: Settings, rep: number): Promise<RunRecord> {
  const { upstream, proxy, origin } = targetOf(stack, scenario);
  const durationMs = settings.durationMs[mode];
  const load = (ms: number) => {
    const loadMode = MODES[mode];
    const maxRequests = loadMode.kind === 'rate' ? Math.ceil((loadMode.perSecond * ms) / 1000) : MAX_CLOSED_REQUESTS;
    return runLoad({ origin, mode: loadMode, durationMs: ms, maxRequests, request: scenario.request, expectStatus: scenario.expectStatus });
  };
  await scenario.prepare?.();
  await load(settings.warmupMs);
  const proxyPid = proxy?.pid ?? stack.gateway.pid;
  const proxyBefore = sampleProcess(proxyPid);
  const upstreamBefore = sampleProcess(upstream.pid);
  const result = await load(durationMs);
  const proxyAfter = sampleProcess(proxyPid);
  const upstreamAfter = sampleProcess(upstream.pid);
  const answered = Math.max(1, result.ok + result.failed);
  const record: RunRecord = {
    scenario: scenario.id,
    mode,
    rep,
    rps: result.ok / (result.elapsedNs / 1e9),
    ok: result.ok,
    failed: result.failed,
    statuses: result.statuses,
    ...summarize(result.histogram),
    proxyCpuUsPerReq: proxy ? (proxyAfter.cpuUs - proxyBefore.cpuUs) / answered : null,
    upstreamCpuUsPerReq: (upstreamAfter.cpuUs - upstreamBefore.cpuUs) / answered,
    proxyRssMb: proxyAfter.rssBytes / 2 ** 20,
  };
  const failures = record.failed > 0 ? `  FAILED ${record.failed} ${JSON.stringify(record.statuses)}` : '';
  log(
    `  rep ${rep} ${scenario.id.padEnd(22)} ${mode.padEnd(5)} ${record.rps.toFixed(0).padStart(6)} req/s  p50 ${record.p50_us.toFixed(0).padStart(6)} µs  p99 ${record.p99_us.toFixed(0).padStart(7)} µs${
      record.proxyCpuUsPerReq === null ? '' : `  proxy CPU ${record.proxyCpuUsPerReq.toFixed(0)} µs/req`
    }  upstream CPU ${record.upstreamCpuUsPerReq.toFixed(0)} µs/req${failures}`,
  );
  return record;
}

async function kidStorm(stack: Stack, tokens: Tokens, durationMs: number): Promise<KidStormRun> {
  const before = await ask<{ jwksFetches: number }>(stack.authority.child, 'stats');
  const result = await runLoad({
    origin: stack.gateway.origin,
    mode: MODES.c64,
    durationMs,
    maxRequests: MAX_CLOSED_REQUESTS,
    request: unknownKidRequest(tokens),
    expectStatus: 401,
  });
  const after = await ask<{ jwksFetches: number }>(stack.authority.child, 'stats');
  const run: KidStormRun = {
    requests: result.ok + result.failed,
    rps: (result.ok + result.failed) / (result.elapsedNs / 1e9),
    durationMs: result.elapsedNs / 1e6,
    jwksFetches: after.jwksFetches - before.jwksFetches,
    statuses: result.statuses,
  };
  log(`  unknown-kid storm: ${run.requests} requests, ${run.jwksFetches} JWKS fetch(es), statuses ${JSON.stringify(run.statuses)}`);
  return run;
}

async function sseStream(stack: Stack, tokens: Tokens, events: number): Promise<{ direct: StreamCheck; gateway: StreamCheck }> {
  const headers = { ...SSE_HEADERS(tokens.jwt), 'x-bench-events': String(events) };
  const direct = await readEventStream(stack.upstream.origin, stack.upstream.path, headers);
  const gateway = await readEventStream(stack.gateway.origin, ROUTES.jwt, headers);
  log(`  SSE ${events} events: direct ${direct.events} in ${direct.elapsedMs.toFixed(0)} ms, gateway ${gateway.events}${gateway.inOrder ? ' in order' : ' OUT OF ORDER'} in ${gateway.elapsedMs.toFixed(0)} ms`);
  return { direct, gateway };
}

async function sseOpenSample(stack: Stack, tokens: Tokens, count: number, when: string): Promise<SseOpenSample> {
  const mb = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;
  const rssBefore = sampleProcess(stack.gateway.pid).rssBytes;
  const streams = await openEventStreams(stack.gateway.origin, ROUTES.jwt, SSE_HEADERS(tokens.jwt), count, STREAM_OPEN_TIMEOUT_MS);
  await sleep(STREAMS_SETTLE_MS);
  const rssOpen = sampleProcess(stack.gateway.pid).rssBytes;
  await streams.close();
  const sample = { opened: streams.opened, failed: streams.failed, rssBeforeMb: mb(rssBefore), rssOpenMb: mb(rssOpen) };
  log(`  ${count} open SSE streams, ${when}: ${sample.opened} open, gateway RSS ${sample.rssBeforeMb} → ${sample.rssOpenMb} MB`);
  return sample;
}

/** Last, because it restarts the gateway: the streams in the loaded gateway, then in a fresh one. */
async function sseOpen(stack: Stack, tokens: Tokens, count: number): Promise<SseOpenResult> {
  const afterLoad = await sseOpenSample(stack, tokens, count, 'after the load runs');
  await stack.restartGateway();
  const fresh = await sseOpenSample(stack, tokens, count, 'fresh gateway');
  return { streams: count, afterLoad, fresh };
}

function selectScenarios(all: readonly LoadScenario[], settings: Settings, only: readonly string[] | undefined, modes: readonly string[] | undefined): LoadScenario[] {
  const wanted = only && new Set([...only, ...all.filter((s) => only.includes(s.id)).map((s) => s.baseline)]);
  return all
    .filter((scenario) => !wanted || wanted.has(scenario.id))
    .map((scenario) => ({
      ...scenario,
      modes: (settings.quick && !only ? scenario.quickModes : scenario.modes).filter((mode) => !modes || modes.includes(mode)),
    }))
    .filter((scenario) => scenario.modes.length > 0);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      reps: { type: 'string' },
      rounds: { type: 'string' },
      only: { type: 'string' },
      modes: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'gateway-log': { type: 'string' },
      'gateway-flags': { type: 'string' },
      tsx: { type: 'boolean', default: false },
      'no-write': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const base = values.quick ? QUICK : FULL;
  const roundCount = values.rounds ?? values.reps;
  const settings: Settings = { ...base, reps: roundCount === undefined ? base.reps : Math.max(1, Number(roundCount)) };
  const only = values.only?.split(',');
  const modes = values.modes?.split(',');
  const specials = !only || only.includes('special');

  pinProcess(CLIENT_CORE);
  const environment = describeEnvironment();
  log(`machine: ${environment.machine.cpu_model}, ${environment.machine.cores} cores, load ${environment.machine.load_before}; node ${environment.node}`);
  const started = Date.now();
  const gatewayEntry = values.tsx ? 'tsx' : ensureBuilt(log);
  const cpuProfile = values['cpu-prof'];
  const nodeArgs = [...(cpuProfile ? ['--cpu-prof', '--cpu-prof-dir', cpuProfile] : []), ...(values['gateway-flags']?.split(' ').filter(Boolean) ?? [])];
  // The reference proxies are profiled beside the gateway, each into its own folder: compare them concern by concern.
  const referenceNodeArgs = cpuProfile ? (kind: string) => ['--cpu-prof', '--cpu-prof-dir', join(cpuProfile, `reference-${kind}`)] : undefined;
  const stack = await startStack({ nodeArgs, referenceNodeArgs, gatewayLog: values['gateway-log'], gatewayEntry });
  try {
    const tokens = await mintTokens(stack, only && !only.includes('jwt-fresh') ? 0 : settings.freshPool || 1);
    const calcSessions = {
      direct: await openCalculatorSession(stack.calculator.origin, stack.calculator.path, tokens.calc),
      gateway: await openCalculatorSession(stack.gateway.origin, ROUTES.calc, tokens.calc),
    };
    const scenarios = selectScenarios(loadScenarios({ stack, tokens, calcSessions }), settings, only, modes);
    const runs: RunRecord[] = [];
    const storms: KidStormRun[] = [];
    const streams = { direct: [] as StreamCheck[], gateway: [] as StreamCheck[] };

    log(`warming up (${settings.firstWarmupMs} ms per scenario)`);
    for (const scenario of scenarios) {
      if (scenario.upstream === 'calculator') stack.gateway.pin(CLIENT_CORE);
      await warmUp(stack, scenario, settings.firstWarmupMs);
      if (scenario.upstream === 'calculator') stack.gateway.pin(SERVER_CORE);
    }
    for (let rep = 1; rep <= settings.reps; rep += 1) {
      log(`round ${rep}/${settings.reps} (load ${loadAverage()})`);
      for (const upstream of ['trivial', 'calculator'] as const) {
        const group = scenarios.filter((scenario) => scenario.upstream === upstream);
        if (group.length === 0) continue;
        // The calculator runs with the gateway off the upstream's core: the issue's "gateway on its own core".
        if (upstream === 'calculator') stack.gateway.pin(CLIENT_CORE);
        for (const mode of Object.keys(MODES) as ModeName[]) {
          for (const scenario of roundOrder(group.filter((candidate) => candidate.modes.includes(mode)), rep - 1)) {
            runs.push(await measure(stack, scenario, mode, settings, rep));
          }
        }
        if (upstream === 'calculator') stack.gateway.pin(SERVER_CORE);
      }
      if (specials) {
        storms.push(await kidStorm(stack, tokens, settings.stormMs));
        const checks = await sseStream(stack, tokens, settings.sseEvents);
        streams.direct.push(checks.direct);
        streams.gateway.push(checks.gateway);
      }
    }
    const special: SpecialResults = {
      kidStorm: { cooldownMs: JWKS_COOLDOWN_MS, runs: storms },
      sseStream: { events: settings.sseEvents, ...streams },
      sseOpen: specials ? await sseOpen(stack, tokens, settings.sseStreams) : undefined,
    };

    const rows = aggregate(scenarios, runs);
    const rounds = summarizeRounds(runs);
    const targets = evaluateTargets(rows, special, rounds);
    const output = {
      generated_at: new Date().toISOString(),
      duration_s: Math.round((Date.now() - started) / 1000),
      settings: { ...settings, gateway_entry: gatewayEntry === 'tsx' ? 'src/main.ts under tsx' : `node ${gatewayEntry}` },
      ...environment,
      machine: { ...environment.machine, load_after: loadAverage() },
      layout: { client_core: CLIENT_CORE, server_core: SERVER_CORE, calculator_gateway_core: CLIENT_CORE },
      scenarios: rows,
      rounds,
      special,
      targets,
      runs,
    };
    process.stdout.write(`\n${formatRows(rows)}\n\n${formatRounds(rounds)}\n\n${formatSpecial(special)}\n\nTargets:\n${formatTargets(targets)}\n`);
    process.stdout.write(`\nload average before ${environment.machine.load_before}, after ${output.machine.load_after}\n`);
    if (!values['no-write']) {
      mkdirSync(RESULTS_DIR, { recursive: true });
      const title = `mcp-auth-gateway latency percentiles (${settings.quick ? 'quick' : 'full'} run, ${output.generated_at.slice(0, 16)}Z, medians of ${settings.reps} rounds)`;
      writeAtomically(`${RESULTS_DIR}/latest.json`, `${JSON.stringify(output, null, 2)}\n`);
      writeAtomically(`${RESULTS_DIR}/latest.svg`, `${renderSvg(rows, title)}\n`);
      process.stdout.write(`wrote ${RESULTS_DIR}/latest.json and latest.svg (${output.duration_s} s)\n`);
    }
  } finally {
    await stack.stop();
  }
}

function writeAtomically(path: string, content: string): void {
  writeFileSync(`${path}.tmp`, content);
  renameSync(`${path}.tmp`, path);
}

main().catch((error: unknown) => {
  log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
