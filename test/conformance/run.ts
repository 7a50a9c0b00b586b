/**
 * `npm run test:conformance`: the MCP conformance suite (@modelcontextprotocol/conformance), in two releases
 * (releases.ts: the pinned one and the newest alpha, installed as `conformance-next`), each in two phases:
 *
 * 1. Server: its server scenarios against the gateway in front of the conformance fixture, with a real token from
 *    the development authorization server.
 * 2. Client: its client auth scenarios with `mcp-auth-gateway login` as the client under test (login-client.ts).
 *    Warnings count as failures here: they mark a missed SHOULD of the client.
 *
 * Prints each run's summary and a verdict per release and phase, and rewrites the conformance section of
 * docs/compatibility.md with the figures; exits non-zero on any failure not listed with its reason in the release's
 * expectation files, on a listed one that no longer fails, on a required scenario (required-scenarios.ts) without a
 * result, or on a suite exit code the results do not explain.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../../src/observability/logger.js';
import { replaceConformanceSection, type PhaseFigures } from './compatibility-section.js';
import { startConformanceStack } from './gateway-stack.js';
import { CURRENT_RELEASE, NEXT_RELEASE, type SuiteRelease, type SuiteRun } from './releases.js';
import { judge, readResults, type ExpectedFailures, type ScenarioResult, type SuiteExit, type SuiteMode, type Verdict } from './results.js';

/** The whole suite takes well under a minute; a hung scenario must not hold CI. */
const SUITE_TIMEOUT_MS = 10 * 60 * 1000;

/**
 * Per client scenario: a suite runs its scenarios in parallel, each starting two Node processes (the driver and
 * `login`), which on a busy two-core machine takes far longer than the suite's 30 s default.
 */
const CLIENT_SCENARIO_TIMEOUT_MS = 90_000;

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
const COMPATIBILITY_FILE = join(repoRoot, 'docs', 'compatibility.md');

function packageManifest(packageName: string): { readonly path: string; readonly version: string; readonly bin: Record<string, string> } {
  const path = createRequire(import.meta.url).resolve(`${packageName}/package.json`);
  return { path, ...(JSON.parse(readFileSync(path, 'utf8')) as { version: string; bin: Record<string, string> }) };
}

function conformanceCli(packageName: string): string {
  const manifest = packageManifest(packageName);
  const entry = manifest.bin.conformance;
  if (entry === undefined) throw new Error(`${packageName} has no "conformance" bin`);
  return join(dirname(manifest.path), entry);
}

interface SuiteProcess {
  readonly packageName: string;
  /** The suite's CLI arguments (`server …` or `client …`), without `--output-dir`. */
  readonly args: readonly string[];
  /** `preload/index.ts` (token injection and the Node 20 fs shim) or `preload/fs-glob-sync.ts` (the shim only). */
  readonly preload: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Receives the suite's result directories and its output (`log`). */
  readonly outputDir: string;
  readonly log: string;
}

/** Runs the suite's CLI under a preload; resolves with its exit code. */
function runSuite({ packageName, args, preload, env, outputDir, log: logName }: SuiteProcess): Promise<number | null> {
  const log = createWriteStream(join(outputDir, logName));
  const cli = conformanceCli(packageName);
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', join(here, 'preload', preload), cli, ...args, '--output-dir', outputDir], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const timer = setTimeout(() => child.kill('SIGKILL'), SUITE_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      log.end(() => resolve(code));
    });
  });
}

/** The suite's own summary block (from its `=== SUMMARY ===` or `=== SUITE SUMMARY ===` line to the end). */
function suiteSummary(outputDir: string, log: string): string {
  const output = readFileSync(join(outputDir, log), 'utf8');
  const start = Math.max(output.lastIndexOf('=== SUMMARY ==='), output.lastIndexOf('=== SUITE SUMMARY ==='));
  return start === -1 ? '(the suite printed no summary)' : output.slice(start).trim();
}

function report(verdict: Verdict, expected: ExpectedFailures, phase: string, expectationFile: string): string[] {
  const lines: string[] = [];
  for (const outcome of verdict.unexpectedFailures) {
    lines.push(`UNEXPECTED FAILURE ${outcome.scenario}:`);
    for (const check of outcome.failures) lines.push(`  - ${check.id}: ${check.errorMessage ?? check.description ?? ''}`);
  }
  for (const outcome of verdict.expectedFailures) lines.push(`expected failure ${outcome.scenario}: ${expected[outcome.scenario]}`);
  for (const scenario of verdict.staleExpectations) lines.push(`STALE ${expectationFile} entry (it did not fail): ${scenario}`);
  for (const scenario of verdict.missing) lines.push(`MISSING required scenario (no result): ${scenario}`);
  for (const { suite, code } of verdict.failedSuites) lines.push(`SUITE ${suite} exited with ${code === null ? 'no exit code (killed)' : `exit code ${code}`}`);
  for (const outcome of verdict.outcomes) {
    for (const check of outcome.warnings) lines.push(`warning ${outcome.scenario} ${check.id}: ${check.errorMessage ?? check.description ?? ''}`);
  }
  const failed = verdict.outcomes.filter((outcome) => outcome.failures.length > 0).length;
  lines.push(`${phase}: ${verdict.outcomes.length - failed} passed, ${failed} failed`);
  return lines;
}

function readExpected(file: string): ExpectedFailures {
  return JSON.parse(readFileSync(join(here, file), 'utf8')) as ExpectedFailures;
}

interface PhaseRun {
  readonly release: SuiteRelease;
  readonly mode: SuiteMode;
  readonly runs: readonly SuiteRun[];
  readonly dir: string;
  /** How to run one of `runs`: the process's CLI arguments before the run's own, its preload and environment. */
  readonly invocation: (run: SuiteRun) => Pick<SuiteProcess, 'args' | 'preload' | 'env'>;
}

/** Runs every suite run of one phase of one release, each into its own directory, and judges the results together. */
async function runPhase({ release, mode, runs, dir, invocation }: PhaseRun): Promise<{ verdict: Verdict; figures: PhaseFigures; lines: string[] }> {
  const started = Date.now();
  const version = packageManifest(release.packageName).version;
  const expectationFile = mode === 'server' ? release.expectedServerFailures : release.expectedClientFailures;
  const expected = readExpected(expectationFile);
  const results: ScenarioResult[] = [];
  const suiteExits: SuiteExit[] = [];
  const lines: string[] = [];
  for (const run of runs) {
    const outputDir = join(dir, run.name);
    mkdirSync(outputDir, { recursive: true });
    const { args, preload, env } = invocation(run);
    const code = await runSuite({ packageName: release.packageName, args: [...args, ...run.args], preload, env, outputDir, log: 'suite.log' });
    suiteExits.push({ suite: `${mode} ${run.args.join(' ')}`, code });
    results.push(...readResults(outputDir, mode, run.wire));
    lines.push(`--- ${version} ${mode} ${run.args.join(' ')} (results in ${outputDir})`, suiteSummary(outputDir, 'suite.log'), `exit code ${String(code)}`, '');
  }
  const required = mode === 'server' ? release.requiredServer : release.requiredClient;
  const verdict = judge(results, expected, { warningsFail: mode === 'client', required, suiteExits });
  const phase = `${version} ${mode === 'server' ? 'server scenarios through the gateway' : 'client scenarios with login'}`;
  lines.push(`${verdict.outcomes.length} scenarios (${required.length} required), ${((Date.now() - started) / 1000).toFixed(1)} s`);
  lines.push(...report(verdict, expected, phase, expectationFile));
  return { verdict, figures: { version, mode, verdict, expected }, lines };
}

/**
 * Control run: the same client with the token's signature altered must fail to initialize, which shows the
 * suite's traffic really is authenticated by the gateway (no bypass) before the real run is trusted.
 */
async function controlRunFails(mcpUrl: URL, token: string, outputDir: string): Promise<boolean> {
  await runSuite({
    packageName: CURRENT_RELEASE.packageName,
    args: ['server', '--url', mcpUrl.href, '--scenario', 'server-initialize'],
    preload: 'index.ts',
    env: { CONFORMANCE_GATEWAY_ORIGIN: mcpUrl.origin, CONFORMANCE_BEARER_TOKEN: `${token}x` },
    outputDir,
    log: 'suite.log',
  });
  const [result] = readResults(outputDir);
  return result !== undefined && result.checks.some((check) => check.status === 'FAILURE');
}

/**
 * The command the suite runs once per client scenario, with the scenario's server URL appended. The suite splits
 * it on spaces, so no part may contain one.
 */
function loginCommand(): string {
  const parts = [process.execPath, '--import', 'tsx', join(here, 'login-client.ts')];
  if (parts.some((part) => part.includes(' '))) throw new Error(`the client command cannot contain spaces: ${parts.join(' ')}`);
  return parts.join(' ');
}

const RELEASES = [CURRENT_RELEASE, NEXT_RELEASE] as const;

async function main(): Promise<number> {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), 'mcp-gateway-conformance-'));
  const controlDir = join(root, 'control');
  mkdirSync(controlDir);
  const logger = createLogger({ level: 'warn', destination: createWriteStream(join(root, 'gateway.log')) });
  const phases: Awaited<ReturnType<typeof runPhase>>[] = [];
  const stack = await startConformanceStack(logger);
  try {
    process.stdout.write(`conformance suite against ${stack.mcpUrl.href} (through the gateway), results in ${root}\n`);
    if (!(await controlRunFails(stack.mcpUrl, stack.token, controlDir))) {
      process.stdout.write('control run with an altered token did not fail: the suite is not going through gateway auth\n');
      return 1;
    }
    process.stdout.write('control run with an altered token: refused as it must be\n');
    for (const release of RELEASES) {
      const env = { CONFORMANCE_GATEWAY_ORIGIN: stack.mcpUrl.origin, CONFORMANCE_BEARER_TOKEN: stack.token };
      const invocation = () => ({ args: ['server', '--url', stack.mcpUrl.href], preload: 'index.ts', env });
      phases.push(await runPhase({ release, mode: 'server', runs: release.server, dir: join(root, release.packageName, 'server'), invocation }));
      process.stdout.write(`\n${phases.at(-1)?.lines.join('\n') ?? ''}\n`);
    }
  } finally {
    await stack.close();
  }
  for (const release of RELEASES) {
    const invocation = () => ({
      args: ['client', '--command', loginCommand(), '--timeout', String(CLIENT_SCENARIO_TIMEOUT_MS)],
      preload: 'fs-glob-sync.ts',
    });
    phases.push(await runPhase({ release, mode: 'client', runs: release.client, dir: join(root, release.packageName, 'client'), invocation }));
    process.stdout.write(`\n${phases.at(-1)?.lines.join('\n') ?? ''}\n`);
  }
  writeFileSync(COMPATIBILITY_FILE, replaceConformanceSection(readFileSync(COMPATIBILITY_FILE, 'utf8'), phases.map((phase) => phase.figures)));
  process.stdout.write(`\n${COMPATIBILITY_FILE}: conformance section rewritten\nwhole run: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return phases.every((phase) => phase.verdict.ok) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`conformance run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
