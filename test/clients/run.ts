/**
 * `npm run test:clients`: the compatibility matrix from real third-party MCP clients. Starts the demo stack on
 * free loopback ports, drives each client headless (Chromium from Debian for the web UIs), judges each cell from
 * what the gateway and the authorization server saw plus what the client showed, writes docs/compatibility.md,
 * and exits non-zero when a cell of the committed docs/compatibility.md got worse (pass → not pass, n.a. → fail).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeDemoPorts, startDemoStack } from '../../examples/demo/stack.js';
import { createLogger } from '../../src/observability/logger.js';
import { launchChromium, type Pages } from './browser.js';
import { clientBudget } from './budget.js';
import { REPO_ROOT, type ClientDriver, type DriverOutcome, type MatrixContext } from './context.js';
import { browserPage } from './drivers/browser-page.js';
import { inspectorCli } from './drivers/inspector-cli.js';
import { inspectorV1, inspectorV1Upfront } from './drivers/inspector-v1-direct.js';
import { inspectorWeb } from './drivers/inspector-web.js';
import { mcpRemote } from './drivers/mcp-remote.js';
import { sdkWithoutRefreshTokens, sdkWithRefreshTokens, sdkWithRefreshTokensUpfront } from './drivers/sdk.js';
import { sdkV2WithoutRefreshTokens, sdkV2WithRefreshTokens } from './drivers/sdk-v2.js';
import { judge, type AuditLine } from './evidence.js';
import { conformanceSection } from '../conformance/compatibility-section.js';
import { parseCompatibility, regressions, renderCompatibility, unfinishedRow, type Row } from './matrix.js';
import { observeHttp } from './observer.js';
import { stopAll } from './processes.js';

/**
 * The whole run, however the clients behave (their own timeouts add up to more): past it, the client running is
 * stopped, it and every client after it are marked fail, the matrix is still written, and the run fails.
 */
const RUN_TIMEOUT_MS = 5 * 60 * 1000;
/** Stopping the stack and Chromium after that; a run not over by then hangs outside the clients and exits without a matrix. */
const TEARDOWN_GRACE_MS = 60 * 1000;
const MATRIX_FILE = 'docs/compatibility.md';
const CHROMIUM = '/usr/bin/chromium';

const ALL_DRIVERS: readonly ClientDriver[] = [
  inspectorCli,
  inspectorWeb,
  inspectorV1,
  inspectorV1Upfront,
  mcpRemote,
  sdkWithoutRefreshTokens,
  sdkWithRefreshTokens,
  sdkWithRefreshTokensUpfront,
  sdkV2WithoutRefreshTokens,
  sdkV2WithRefreshTokens,
  browserPage,
];

/**
 * `npm run test:clients -- <text>` runs only the clients whose name contains <text>, to work on one client: the
 * matrix is printed, not written, and not compared.
 */
const only = process.argv[2];
const DRIVERS = only === undefined ? ALL_DRIVERS : ALL_DRIVERS.filter((driver) => driver.client.includes(only));

/** The committed matrix (the run's baseline), else the file as it is. */
function baseline(): string {
  try {
    return execFileSync('git', ['show', `HEAD:${MATRIX_FILE}`], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    const file = join(REPO_ROOT, MATRIX_FILE);
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }
}

class TimedOut extends Error {}

function withTimeout<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`${what} did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function auditLines(lines: readonly string[]): AuditLine[] {
  return lines.flatMap((line) => {
    const parsed = JSON.parse(line) as AuditLine & { msg?: string };
    return parsed.msg === 'audit' ? [parsed] : [];
  });
}

async function main(): Promise<number> {
  if (!existsSync(CHROMIUM)) {
    process.stderr.write(`test:clients needs Debian's Chromium at ${CHROMIUM}: apt-get install -y chromium\n`);
    return 1;
  }
  const started = Date.now();
  const runDir = await mkdtemp(join(tmpdir(), 'mcp-gateway-clients-'));
  const logLines: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void logLines.push(line) } });
  const ports = await freeDemoPorts();
  const observer = observeHttp({ gateway: ports.gateway, authorizationServer: ports.authServer });
  const stack = await startDemoStack({ ports, logger });
  let pages: Pages | undefined;
  const rows: Row[] = [];
  /** Clients the run's deadline stopped or never started. */
  const unfinished: string[] = [];
  const unfinishedNote = `did not finish within the run's ${RUN_TIMEOUT_MS / 1000} s`;
  const deadline = started + RUN_TIMEOUT_MS;
  try {
    pages = await launchChromium();
    const browser = pages;
    /** Where the running client's main run ended in the observations (see MatrixContext.endOfMainRun). */
    let mainRunEnd: { readonly exchanges: number; readonly log: number } | undefined;
    // Read through a function: the compiler cannot see the driver set it meanwhile.
    const endOfMainRun = () => mainRunEnd;
    const context: MatrixContext = {
      calcUrl: new URL(`${stack.gatewayUrl}/calc/mcp`),
      upfrontUrl: new URL(`${stack.gatewayUrl}/calc-upfront/mcp`),
      opaqueUrl: new URL(`${stack.gatewayUrl}/calc-opaque/mcp`),
      notesUrl: new URL(`${stack.gatewayUrl}/notes/mcp`),
      runDir,
      newPage: () => browser.newPage(),
      chromium: `Chromium ${browser.version.split('.', 1)[0] ?? ''}`,
      endOfMainRun: () => {
        mainRunEnd ??= { exchanges: observer.exchanges().length, log: logLines.length };
      },
    };
    process.stdout.write(`clients against ${stack.gatewayUrl} (demo stack), logs in ${runDir}\n`);
    const markUnfinished = (driver: ClientDriver): void => {
      unfinished.push(driver.client);
      rows.push(unfinishedRow(driver.client, driver.version(context), unfinishedNote));
    };
    for (const driver of DRIVERS) {
      const [exchangesBefore, logBefore, clientStarted] = [observer.exchanges().length, logLines.length, Date.now()];
      mainRunEnd = undefined;
      const budget = clientBudget(driver.timeoutMs, deadline, clientStarted);
      if (budget.ms === 0) {
        markUnfinished(driver);
        continue;
      }
      let outcome: DriverOutcome;
      let stoppedByRun = false;
      try {
        outcome = await withTimeout(driver.run(context), budget.ms, driver.client);
      } catch (error) {
        stoppedByRun = error instanceof TimedOut && budget.cutByRun;
        // The first line: Playwright appends its call log.
        const reason = (error instanceof Error ? error.message : String(error)).split('\n', 1)[0];
        outcome = { results: { added: false, multiplied: false }, notes: [`run failed: ${reason}`] };
      } finally {
        await stopAll();
        await browser.closePages();
      }
      const evidence = {
        exchanges: observer.exchanges().slice(exchangesBefore, endOfMainRun()?.exchanges),
        audit: auditLines(logLines.slice(logBefore, endOfMainRun()?.log)),
        results: outcome.results,
      };
      // What each cell was judged on, for reading after a surprising result (no codes or tokens: see observer.ts).
      writeFileSync(join(runDir, `${driver.client.replace(/\W+/g, '-')}.evidence.json`), JSON.stringify(evidence, null, 1));
      if (stoppedByRun) markUnfinished(driver);
      else {
        const cells = judge(evidence);
        const routes = { [driver.mainRoute ?? 'jwt']: cells['tools/call'], ...outcome.routes };
        rows.push({ client: driver.client, version: driver.version(context), cells, notes: (outcome.notes ?? []).join('; '), routes });
      }
      process.stdout.write(`  ${driver.client}: ${((Date.now() - clientStarted) / 1000).toFixed(1)} s\n`);
    }
  } finally {
    observer.close();
    await pages?.close();
    await stack.close();
    writeFileSync(join(runDir, 'gateway.log'), logLines.join(''));
  }

  const markdown = renderCompatibility(rows);
  process.stdout.write(`\n${markdown.slice(markdown.indexOf('| Client |'))}\n`);
  for (const client of unfinished) process.stdout.write(`UNFINISHED ${client}: ${unfinishedNote}\n`);
  if (only !== undefined) return unfinished.length === 0 ? 0 : 1;
  const lost = regressions(parseCompatibility(baseline()), rows);
  // The sections below the matrix (test:conformance's, then the hand-written identity providers) are kept as they are.
  const file = join(REPO_ROOT, MATRIX_FILE);
  writeFileSync(file, `${markdown}${conformanceSection(existsSync(file) ? readFileSync(file, 'utf8') : '')}`);
  process.stdout.write(`${MATRIX_FILE} written; ${((Date.now() - started) / 1000).toFixed(1)} s in all\n`);
  for (const line of lost) process.stdout.write(`REGRESSION ${line}\n`);
  return lost.length === 0 && unfinished.length === 0 ? 0 : 1;
}

const watchdog = setTimeout(() => {
  process.stderr.write(`test:clients: no end after ${(RUN_TIMEOUT_MS + TEARDOWN_GRACE_MS) / 1000} s, stopping every client\n`);
  void stopAll().finally(() => process.exit(1));
}, RUN_TIMEOUT_MS + TEARDOWN_GRACE_MS);
watchdog.unref();

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`test:clients failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    void stopAll().finally(() => process.exit(1));
  },
);
