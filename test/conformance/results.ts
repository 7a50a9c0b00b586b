import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';

/** One check of a scenario, as the suite writes it to `checks.json`. */
export interface Check {
  readonly id: string;
  readonly name?: string;
  readonly status: string;
  readonly description?: string;
  readonly errorMessage?: string;
}

export interface ScenarioResult {
  readonly scenario: string;
  readonly checks: readonly Check[];
}

export interface ScenarioOutcome {
  readonly scenario: string;
  readonly passed: number;
  readonly failures: readonly Check[];
  readonly warnings: readonly Check[];
}

/** Scenario name → why it is expected to fail through the gateway. */
export type ExpectedFailures = Readonly<Record<string, string>>;

/** How one run of the suite's CLI ended: its exit code, null when it was killed. */
export interface SuiteExit {
  readonly suite: string;
  readonly code: number | null;
}

export interface Verdict {
  readonly outcomes: readonly ScenarioOutcome[];
  readonly unexpectedFailures: readonly ScenarioOutcome[];
  readonly expectedFailures: readonly ScenarioOutcome[];
  /** Listed as expected to fail but passed (or did not run): the list is out of date. */
  readonly staleExpectations: readonly string[];
  /** Required scenarios with no result: the suite crashed, skipped them or no longer has them. */
  readonly missing: readonly string[];
  /** Suite runs whose exit code the results do not explain. */
  readonly failedSuites: readonly SuiteExit[];
  readonly ok: boolean;
}

export interface JudgeOptions {
  /** A WARNING counts as a failure (the client phase, where warnings mark missed SHOULDs). */
  readonly warningsFail?: boolean;
  /** Scenarios that must have a result. */
  readonly required?: readonly string[];
  /** How each suite run ended. */
  readonly suiteExits?: readonly SuiteExit[];
}

/** Which side of the suite ran: `server` scenarios test a server, `client` scenarios test a client command. */
export type SuiteMode = 'server' | 'client';

const TIMESTAMP = String.raw`\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z`;

/**
 * How the suite names each result directory: `server-<scenario>-<ISO timestamp with - for : and .>` for servers,
 * `<scenario>-<timestamp>` for clients, where a client scenario such as `auth/basic-cimd` makes a subdirectory.
 */
const RESULT_DIRS: Record<SuiteMode, RegExp> = {
  server: new RegExp(`^server-(.+)-${TIMESTAMP}$`),
  client: new RegExp(`^(.+)-${TIMESTAMP}$`),
};

export function scenarioOfResultDir(name: string, mode: SuiteMode = 'server'): string | undefined {
  return RESULT_DIRS[mode].exec(name)?.[1];
}

/**
 * Every scenario result the suite wrote under `dir` (its `--output-dir`), found by their `checks.json`. With `wire`,
 * each scenario is named `<scenario>@<wire>`: the same scenario run at another protocol revision is another result.
 */
export function readResults(dir: string, mode: SuiteMode = 'server', wire?: string): ScenarioResult[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).flatMap((path) => {
    if (basename(path) !== 'checks.json') return [];
    const scenario = scenarioOfResultDir(dirname(path).split(sep).join('/'), mode);
    if (scenario === undefined) return [];
    const checks = JSON.parse(readFileSync(join(dir, path), 'utf8')) as Check[];
    return [{ scenario: wire === undefined ? scenario : `${scenario}@${wire}`, checks }];
  });
}

/** `warningsFail`: a WARNING counts as a failure (the client phase, where warnings mark missed SHOULDs). */
export function outcomeOf(result: ScenarioResult, warningsFail = false): ScenarioOutcome {
  const failing = (check: Check) => check.status === 'FAILURE' || (warningsFail && check.status === 'WARNING');
  return {
    scenario: result.scenario,
    passed: result.checks.filter((check) => check.status === 'SUCCESS').length,
    failures: result.checks.filter(failing),
    warnings: result.checks.filter((check) => check.status === 'WARNING' && !failing(check)),
  };
}

/**
 * A scenario fails when any of its checks fails (the suite's own rule; with `warningsFail`, a warning too). A
 * failure is fine only when the scenario is listed as expected to fail; a listed scenario that passes or did not
 * run makes the list stale. Every `required` scenario must have a result, and every suite run must exit 0, or 1
 * (its code for failed scenarios) when listed failures explain it.
 */
export function judge(results: readonly ScenarioResult[], expected: ExpectedFailures, options: JudgeOptions = {}): Verdict {
  const outcomes = results.map((result) => outcomeOf(result, options.warningsFail));
  const failing = outcomes.filter((outcome) => outcome.failures.length > 0);
  const unexpectedFailures = failing.filter((outcome) => !Object.hasOwn(expected, outcome.scenario));
  const expectedFailures = failing.filter((outcome) => Object.hasOwn(expected, outcome.scenario));
  const staleExpectations = Object.keys(expected).filter((scenario) => !expectedFailures.some((outcome) => outcome.scenario === scenario));
  const missing = (options.required ?? []).filter((scenario) => !outcomes.some((outcome) => outcome.scenario === scenario));
  const failedSuites = (options.suiteExits ?? []).filter(({ code }) => code !== 0 && !(code === 1 && expectedFailures.length > 0));
  return {
    outcomes,
    unexpectedFailures,
    expectedFailures,
    staleExpectations,
    missing,
    failedSuites,
    ok: outcomes.length > 0 && unexpectedFailures.length === 0 && staleExpectations.length === 0 && missing.length === 0 && failedSuites.length === 0,
  };
}
