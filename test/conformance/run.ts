/**
 * `npm run test:conformance`: the MCP conformance suite's server scenarios (@modelcontextprotocol/conformance),
 * run against the gateway in front of the conformance fixture, with a real token from the development
 * authorization server. Prints the suite's summary and a verdict; exits non-zero on any failure not listed in
 * expected-failures.json, or on a listed one that no longer fails.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../../src/observability/logger.js';
import { startConformanceStack } from './gateway-stack.js';
import { judge, readResults, type ExpectedFailures, type Verdict } from './results.js';

/** The whole suite takes well under a minute; a hung scenario must not hold CI. */
const SUITE_TIMEOUT_MS = 10 * 60 * 1000;

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
  readonly mcpUrl: URL;
  readonly token: string;
  /** `--suite all` (active and pending scenarios) or `--scenario NAME`. */
  readonly selection: readonly string[];
  /** Receives the suite's result directories and its output (`suite.log`). */
  readonly outputDir: string;
}

/** Runs the suite's CLI under the preload (token injection, Node 20 fs shim); resolves with its exit code. */
function runSuite({ mcpUrl, token, selection, outputDir }: SuiteRun): Promise<number | null> {
  const log = createWriteStream(join(outputDir, 'suite.log'));
  const preload = join(here, 'preload', 'index.ts');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', preload, conformanceCli(), 'server', '--url', mcpUrl.href, '--output-dir', outputDir, ...selection],
    {
      cwd: repoRoot,
      env: { ...process.env, CONFORMANCE_GATEWAY_ORIGIN: mcpUrl.origin, CONFORMANCE_BEARER_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
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

/** The suite's own summary block (from its `=== SUMMARY ===` line to the end). */
function suiteSummary(outputDir: string): string {
  const output = readFileSync(join(outputDir, 'suite.log'), 'utf8');
  const start = output.lastIndexOf('=== SUMMARY ===');
  return start === -1 ? '(the suite printed no summary)' : output.slice(start).trim();
}

function report(verdict: Verdict, expected: ExpectedFailures): string[] {
  const lines: string[] = [];
  for (const outcome of verdict.unexpectedFailures) {
    lines.push(`UNEXPECTED FAILURE ${outcome.scenario}:`);
    for (const check of outcome.failures) lines.push(`  - ${check.id}: ${check.errorMessage ?? check.description ?? ''}`);
  }
  for (const outcome of verdict.expectedFailures) lines.push(`expected failure ${outcome.scenario}: ${expected[outcome.scenario]}`);
  for (const scenario of verdict.staleExpectations) lines.push(`STALE expected-failures.json entry (it did not fail): ${scenario}`);
  for (const outcome of verdict.outcomes) {
    for (const check of outcome.warnings) lines.push(`warning ${outcome.scenario} ${check.id}: ${check.errorMessage ?? check.description ?? ''}`);
  }
  const failed = verdict.outcomes.filter((outcome) => outcome.failures.length > 0).length;
  lines.push(`conformance: ${verdict.outcomes.length - failed} passed, ${failed} failed`);
  return lines;
}

/**
 * Control run: the same client with the token's signature altered must fail to initialize, which shows the
 * suite's traffic really is authenticated by the gateway (no bypass) before the real run is trusted.
 */
async function controlRunFails(mcpUrl: URL, token: string, outputDir: string): Promise<boolean> {
  await runSuite({ mcpUrl, token: `${token}x`, selection: ['--scenario', 'server-initialize'], outputDir });
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
    exitCode = await runSuite({ mcpUrl: stack.mcpUrl, token: stack.token, selection: ['--suite', 'all'], outputDir: suiteDir });
  } finally {
    await stack.close();
  }
  process.stdout.write(`${suiteSummary(suiteDir)}\n\n`);
  const verdict = judge(readResults(suiteDir), expected);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`control run with an altered token: refused as it must be\n`);
  process.stdout.write(`suite exit code ${String(exitCode)}, ${verdict.outcomes.length} scenarios, ${seconds} s in all\n`);
  process.stdout.write(`${report(verdict, expected).join('\n')}\n`);
  return verdict.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`conformance run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
