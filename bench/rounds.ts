import { median, type RunRecord } from './results.js';
import type { ModeName } from './scenarios.js';

/**
 * The variance-reduced method: every round runs the compared scenarios of a mode back to back, their order
 * rotating per round, and every ratio is taken within one round (both sides of it measured seconds apart, on the
 * same machine state); the verdict is the median of the rounds' ratios, reported with its min–max. Five runs of
 * one-ratio-per-run moved by as much as the gap the ratios judge (bench/README.md, "How the verdicts are taken").
 */

/** The scenarios every round runs first, back to back: the ones the ratios compare. */
export const COMPARED_SCENARIOS: readonly string[] = ['direct', 'ref-undici-pool', 'ref-reply-from', 'jwt-reused', 'introspection-hit', 'decision-nginx'];

/** `items` shifted left by `by` places, cyclically: round r starts with item r mod n. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const start = ((by % items.length) + items.length) % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

/**
 * The order of one mode's scenarios in round `round`: the compared ones first, rotated among themselves (so none
 * always runs first, or right after a warm-up), then the rest, rotated too.
 */
export function roundOrder<T extends { readonly id: string }>(scenarios: readonly T[], round: number, compared: readonly string[] = COMPARED_SCENARIOS): T[] {
  const first = scenarios.filter((scenario) => compared.includes(scenario.id));
  const rest = scenarios.filter((scenario) => !compared.includes(scenario.id));
  return [...rotate(first, round), ...rotate(rest, round)];
}

/** A median with the range it was taken from. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** One value per round that measured both sides, in round order. */
  readonly rounds: readonly number[];
}

export function spreadOf(values: readonly number[]): Spread | undefined {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return undefined;
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), rounds: finite };
}

const runOf = (runs: readonly RunRecord[], scenario: string, mode: ModeName, round: number): RunRecord | undefined =>
  runs.find((run) => run.scenario === scenario && run.mode === mode && run.rep === round);

const roundsOf = (runs: readonly RunRecord[]): number[] => [...new Set(runs.map((run) => run.rep))].sort((a, b) => a - b);

/** One value per round, from that round's runs; rounds where `value` has nothing to say are left out. */
function perRound(runs: readonly RunRecord[], value: (round: number) => number | undefined): number[] {
  return roundsOf(runs)
    .map(value)
    .filter((figure): figure is number => figure !== undefined && Number.isFinite(figure));
}

/** The proxy's CPU per request of `scenario` in `mode`, round by round. */
export function cpuPerRound(runs: readonly RunRecord[], scenario: string, mode: ModeName): number[] {
  return perRound(runs, (round) => runOf(runs, scenario, mode, round)?.proxyCpuUsPerReq ?? undefined);
}

/** CPU per request of `scenario` ÷ that of `reference`, both from the same round. */
export function cpuRatioPerRound(runs: readonly RunRecord[], scenario: string, reference: string, mode: ModeName): number[] {
  return perRound(runs, (round) => {
    const own = runOf(runs, scenario, mode, round)?.proxyCpuUsPerReq;
    const base = runOf(runs, reference, mode, round)?.proxyCpuUsPerReq;
    return own == null || base == null || base <= 0 ? undefined : own / base;
  });
}

/** p50 of `scenario` minus p50 of `direct` of the same round (µs): what the proxy adds. */
export function addedP50PerRound(runs: readonly RunRecord[], scenario: string, direct: string, mode: ModeName): number[] {
  return perRound(runs, (round) => {
    const own = runOf(runs, scenario, mode, round);
    const base = runOf(runs, direct, mode, round);
    return own && base ? own.p50_us - base.p50_us : undefined;
  });
}

/** Added p50 of `scenario` ÷ added p50 of `reference`, each against the same round's direct p50. */
export function addedP50RatioPerRound(runs: readonly RunRecord[], scenario: string, reference: string, direct: string, mode: ModeName): number[] {
  return perRound(runs, (round) => {
    const own = runOf(runs, scenario, mode, round);
    const base = runOf(runs, reference, mode, round);
    const floor = runOf(runs, direct, mode, round);
    if (!own || !base || !floor) return undefined;
    const referenceAdded = base.p50_us - floor.p50_us;
    return referenceAdded <= 0 ? undefined : (own.p50_us - floor.p50_us) / referenceAdded;
  });
}

/** What the rounds say, in `latest.json` as `rounds` and judged by targets.ts. */
export interface RoundsSummary {
  readonly count: number;
  /** Per-round ratios: CPU per request at 64 connections, added p50 at one connection. */
  readonly jwtCpuVsUndiciPool: Spread | undefined;
  readonly jwtAddedP50VsUndiciPool: Spread | undefined;
  readonly jwtCpuVsReplyFrom: Spread | undefined;
  readonly jwtAddedP50VsReplyFrom: Spread | undefined;
  readonly introspectionHitCpuVsJwt: Spread | undefined;
  readonly decisionCpuVsJwt: Spread | undefined;
  /** The figures themselves (µs), round by round. */
  readonly cpuC64: Readonly<Record<string, Spread | undefined>>;
  readonly addedP50C1: Readonly<Record<string, Spread | undefined>>;
}

const PROXIES = ['ref-undici-pool', 'ref-reply-from', 'jwt-reused', 'introspection-hit', 'decision-nginx'];

export function summarizeRounds(runs: readonly RunRecord[]): RoundsSummary {
  const figures = (figure: (scenario: string) => number[]): Record<string, Spread | undefined> =>
    Object.fromEntries(PROXIES.map((scenario) => [scenario, spreadOf(figure(scenario))]));
  return {
    count: roundsOf(runs).length,
    jwtCpuVsUndiciPool: spreadOf(cpuRatioPerRound(runs, 'jwt-reused', 'ref-undici-pool', 'c64')),
    jwtAddedP50VsUndiciPool: spreadOf(addedP50RatioPerRound(runs, 'jwt-reused', 'ref-undici-pool', 'direct', 'c1')),
    jwtCpuVsReplyFrom: spreadOf(cpuRatioPerRound(runs, 'jwt-reused', 'ref-reply-from', 'c64')),
    jwtAddedP50VsReplyFrom: spreadOf(addedP50RatioPerRound(runs, 'jwt-reused', 'ref-reply-from', 'direct', 'c1')),
    introspectionHitCpuVsJwt: spreadOf(cpuRatioPerRound(runs, 'introspection-hit', 'jwt-reused', 'c64')),
    decisionCpuVsJwt: spreadOf(cpuRatioPerRound(runs, 'decision-nginx', 'jwt-reused', 'c64')),
    cpuC64: figures((scenario) => cpuPerRound(runs, scenario, 'c64')),
    addedP50C1: figures((scenario) => addedP50PerRound(runs, scenario, 'direct', 'c1')),
  };
}

/** `×0.93 (0.88–1.01, 5 rounds)` or `12.3 µs (11.0–14.2, 5 rounds)`. */
export function formatSpread(spread: Spread, unit: '×' | 'µs', digits = unit === '×' ? 2 : 1): string {
  const show = (value: number): string => value.toFixed(digits);
  const range = `${show(spread.min)}–${show(spread.max)}, ${spread.rounds.length} round${spread.rounds.length === 1 ? '' : 's'}`;
  return unit === '×' ? `×${show(spread.median)} (${range})` : `${show(spread.median)} µs (${range})`;
}
