/**
 * `npm run test:conformance`, two phases of the MCP conformance suite (@modelcontextprotocol/conformance):
 *
 * 1. Server: its server scenarios against the gateway in front of the conformance fixture, with a real token from
 *    the development authorization server (expected-failures.json).
 * 2. Client: its client auth scenarios (every 2025-11-25 one, the 2025-03-26 backcompat ones and the drafts) with
 *    `mcp-auth-gateway login` as the client under test (login-client.ts; expected-client-failures.json). Warnings
 *    count as failures here: they mark a missed SHOULD of the client.
 *
 * Prints each phase's summary and a verdict; exits non-zero on any failure not listed with its reason, on a
 * listed one that no longer fails, on a required scenario (required-scenarios.ts) without a result, or on a suite
 * exit code the results do not explain.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../../src/observability/logger.js';
import { startConformanceStack } from './gateway-stack.js';
import { REQUIRED_CLIENT_SCENARIOS, REQUIRED_SERVER_SCENARIOS } from './required-scenarios.js';
import { judge, readResults, type ExpectedFailures, type SuiteExit, type Verdict } from './results.js';

/** The whole suite takes well under a minute; a hung scenario must not hold CI. */
const SUITE_TIMEOUT_MS = 10 * 60 * 1000;

/** The client suites `login` runs: `auth` is every 2025-11-25 auth scenario. */
const CLIENT_SUITES = ['auth', 'backcompat', 'draft'] as const;
/**
 * Per client scenario: a suite runs its scenarios in parallel, each starting two Node processes (the driver and
 * `login`), which on a busy two-core machine takes far longer than the suite's 30 s default.
 */
const CLIENT_SCENARIO_TIMEOUT_MS = 90_000;

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');

function conformanceCli(): string {
  const packageJson = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json');
  const { bin } = JSON.parse(readFileSync(packageJson, 'utf8')) as { bin: Record<string, string> };
  const entry = bin.conformance;
  if (entry === undefined) throw new Error('@modelcontextprotocol/conformance has no "conformance" bin');
  return join(dirname(packageJson), entry);
}

interface SuiteRun {
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
function runSuite({ args, preload, env, outputDir, log: logName }: SuiteRun): Promise<number | null> {
  const log = createWriteStream(join(outputDir, logName));
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', join(here, 'preload', preload), conformanceCli(), ...args, '--output-dir', outputDir], {
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

/** The server phase through the gateway: `selection` is `--suite all` or `--scenario NAME`. */
function runServerSuite(mcpUrl: URL, token: string, selection: readonly string[], outputDir: string): Promise<number | null> {
  return runSuite({
    args: ['server', '--url', mcpUrl.href, ...selection],
    preload: 'index.ts',
    env: { CONFORMANCE_GATEWAY_ORIGIN: mcpUrl.origin, CONFORMANCE_BEARER_TOKEN: token },
    outputDir,
    log: 'suite.log',
  });
}

/** The suite's own summary block (from its `=== SUMMARY ===` or `=== SUITE SUMMARY ===` line to the end). */
function suiteSummary(outputDir: string, log = 'suite.log'): string {
  const output = readFileSync(join(outputDir, log), 'utf8');
  const start = Math.max(output.lastIndexOf('=== SUMMARY ==='), output.lastIndexOf('=== SUITE SUMMARY ==='));
  return start === -1 ? '(the suite printed no summary)' : output.slice(start).trim();
}

function report(verdict: Verdict, expected: ExpectedFailures, phase = 'conformance'): string[] {
  const lines: string[] = [];
  for (const outcome of verdict.unexpectedFailures) {
    lines.push(`UNEXPECTED FAILURE ${outcome.scenario}:`);
    for (const check of outcome.failures) lines.push(`  - ${check.id}: ${check.errorMessage ?? check.description ?? ''}`);
  }
  for (const outcome of verdict.expectedFailures) lines.push(`expected failure ${outcome.scenario}: ${expected[outcome.scenario]}`);
  for (const scenario of verdict.staleExpectations) lines.push(`STALE expected-failures.json entry (it did not fail): ${scenario}`);
  for (const scenario of verdict.missing) lines.push(`MISSING required scenario (no result): ${scenario}`);
  for (const { suite, code } of verdict.failedSuites) lines.push(`SUITE ${suite} exited with ${code === null ? 'no exit code (killed)' : `exit code ${code}`}`);
  for (const outcome of verdict.outcomes) {
    for (const check of outcome.warnings) lines.push(`warning ${outcome.scenario} ${check.id}: ${check.errorMessage ?? check.description ?? ''}`);
  }
  const failed = verdict.outcomes.filter((outcome) => outcome.failures.length > 0).length;
  lines.push(`${phase}: ${verdict.outcomes.length - failed} passed, ${failed} failed`);
  return lines;
}

/**
 * Control run: the same client with the token's signature altered must fail to initialize, which shows the
 * suite's traffic really is authenticated by the gateway (no bypass) before the real run is trusted.
 */
async function controlRunFails(mcpUrl: URL, token: string, outputDir: string): Promise<boolean> {
  await runServerSuite(mcpUrl, `${token}x`, ['--scenario', 'server-initialize'], outputDir);
  const [result] = readResults(outputDir);
  return result !== undefined && result.checks.some((check) => check.status === 'FAILURE');
}

async function main(): Promise<number> {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), 'mcp-gateway-conformance-'));
  const [controlDir, suiteDir] = [join(root, 'control'), join(root, 'suite')];
  mkdirSync(controlDir);
  mkdirSync(suiteDir);
  const logger = createLogger({ level: 'warn', destination: createWriteStream(join(root, 'gateway.log')) });
  const expected = JSON.parse(readFileSync(join(here, 'expected-failures.json'), 'utf8')) as ExpectedFailures;
  const stack = await startConformanceStack(logger);
  let exitCode: number | null;
  try {
    process.stdout.write(`conformance suite against ${stack.mcpUrl.href} (through the gateway), results in ${root}\n`);
    if (!(await controlRunFails(stack.mcpUrl, stack.token, controlDir))) {
      process.stdout.write('control run with an altered token did not fail: the suite is not going through gateway auth\n');
      return 1;
    }
    exitCode = await runServerSuite(stack.mcpUrl, stack.token, ['--suite', 'all'], suiteDir);
  } finally {
    await stack.close();
  }
  process.stdout.write(`${suiteSummary(suiteDir)}\n\n`);
  const verdict = judge(readResults(suiteDir), expected, { required: REQUIRED_SERVER_SCENARIOS, suiteExits: [{ suite: 'server --suite all', code: exitCode }] });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`control run with an altered token: refused as it must be\n`);
  process.stdout.write(`suite exit code ${String(exitCode)}, ${verdict.outcomes.length} scenarios (${REQUIRED_SERVER_SCENARIOS.length} required), ${seconds} s in all\n`);
  process.stdout.write(`${report(verdict, expected).join('\n')}\n`);
  const clientOk = await clientPhase(root);
  process.stdout.write(`\nwhole run: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return verdict.ok && clientOk ? 0 : 1;
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

/** Phase 2: the client auth suites, `login` as the client under test. */
async function clientPhase(root: string): Promise<boolean> {
  const started = Date.now();
  const clientDir = join(root, 'client');
  mkdirSync(clientDir);
  const expected = JSON.parse(readFileSync(join(here, 'expected-client-failures.json'), 'utf8')) as ExpectedFailures;
  process.stdout.write(`\nclient auth scenarios with \`mcp-auth-gateway login\` as the client, results in ${clientDir}\n`);
  const suiteExits: SuiteExit[] = [];
  for (const suite of CLIENT_SUITES) {
    const log = `${suite}.log`;
    const args = ['client', '--command', loginCommand(), '--suite', suite, '--timeout', String(CLIENT_SCENARIO_TIMEOUT_MS)];
    const code = await runSuite({ args, preload: 'fs-glob-sync.ts', outputDir: clientDir, log });
    suiteExits.push({ suite, code });
    process.stdout.write(`${suiteSummary(clientDir, log)}\nsuite ${suite} exit code ${String(code)}\n\n`);
  }
  const verdict = judge(readResults(clientDir, 'client'), expected, { warningsFail: true, required: REQUIRED_CLIENT_SCENARIOS, suiteExits });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`${verdict.outcomes.length} client scenarios (${REQUIRED_CLIENT_SCENARIOS.length} required), ${seconds} s\n`);
  process.stdout.write(`${report(verdict, expected, 'login conformance').join('\n')}\n`);
  return verdict.ok;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`conformance run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
