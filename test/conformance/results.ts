import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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

export interface Verdict {
  readonly outcomes: readonly ScenarioOutcome[];
  readonly unexpectedFailures: readonly ScenarioOutcome[];
  readonly expectedFailures: readonly ScenarioOutcome[];
  /** Listed as expected to fail but passed (or did not run): the list is out of date. */
  readonly staleExpectations: readonly string[];
  readonly ok: boolean;
}

/** `server-<scenario>-<ISO timestamp with - for : and .>` is how the suite names each result directory. */
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

export function scenarioOfResultDir(name: string): string | undefined {
  return RESULT_DIR.exec(name)?.[1];
}

/** Every scenario result the suite wrote under `dir` (its `--output-dir`). */
export function readResults(dir: string): ScenarioResult[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const scenario = entry.isDirectory() ? scenarioOfResultDir(entry.name) : undefined;
    if (scenario === undefined) return [];
    const checks = JSON.parse(readFileSync(join(dir, entry.name, 'checks.json'), 'utf8')) as Check[];
    return [{ scenario, checks }];
  });
}

export function outcomeOf(result: ScenarioResult): ScenarioOutcome {
  return {
    scenario: result.scenario,
    passed: result.checks.filter((check) => check.status === 'SUCCESS').length,
    failures: result.checks.filter((check) => check.status === 'FAILURE'),
    warnings: result.checks.filter((check) => check.status === 'WARNING'),
  };
}

/**
 * A scenario fails when any of its checks fails (the suite's own rule). A failure is fine only when the
 * scenario is listed as expected to fail; a listed scenario that passes or did not run makes the list stale.
 */
export function judge(results: readonly ScenarioResult[], expected: ExpectedFailures): Verdict {
  const outcomes = results.map(outcomeOf);
  const failing = outcomes.filter((outcome) => outcome.failures.length > 0);
  const unexpectedFailures = failing.filter((outcome) => !Object.hasOwn(expected, outcome.scenario));
  const expectedFailures = failing.filter((outcome) => Object.hasOwn(expected, outcome.scenario));
  const staleExpectations = Object.keys(expected).filter((scenario) => !expectedFailures.some((outcome) => outcome.scenario === scenario));
  return {
    outcomes,
    unexpectedFailures,
    expectedFailures,
    staleExpectations,
    ok: outcomes.length > 0 && unexpectedFailures.length === 0 && staleExpectations.length === 0,
  };
}
