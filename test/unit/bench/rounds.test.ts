import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../../bench/results.js';
import {
  addedP50PerRound,
  addedP50RatioPerRound,
  cpuRatioPerRound,
  formatSpread,
  rotate,
  roundOrder,
  spreadOf,
  summarizeRounds,
} from '../../../bench/rounds.js';
import type { ModeName } from '../../../bench/scenarios.js';

function run(scenario: string, mode: ModeName, rep: number, figures: { cpu?: number | null; p50?: number }): RunRecord {
  const p50 = figures.p50 ?? 100;
  return {
    scenario,
    mode,
    rep,
    rps: 1000,
    ok: 1000,
    failed: 0,
    statuses: { 200: 1000 },
    p50_us: p50,
    p90_us: p50,
    p99_us: p50,
    p999_us: p50,
    max_us: p50,
    proxyCpuUsPerReq: figures.cpu === undefined ? 50 : figures.cpu,
    upstreamCpuUsPerReq: 10,
    proxyRssMb: 100,
  };
}

describe('rotate', () => {
  it('starts round r with item r mod n and keeps every item once', () => {
    expect(rotate(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(rotate(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], 5)).toEqual(['c', 'a', 'b']);
    expect(rotate(['a', 'b', 'c'], -1)).toEqual(['c', 'a', 'b']);
    expect(rotate([], 3)).toEqual([]);
  });
});

describe('roundOrder', () => {
  const scenarios = ['direct', 'jwt-fresh', 'ref-undici-pool', 'jwt-reused', 'reject-no-token'].map((id) => ({ id }));
  const compared = ['direct', 'ref-undici-pool', 'jwt-reused'];

  it('runs the compared scenarios first, back to back, their order rotating per round', () => {
    const ids = (round: number) => roundOrder(scenarios, round, compared).map((scenario) => scenario.id);
    expect(ids(0)).toEqual(['direct', 'ref-undici-pool', 'jwt-reused', 'jwt-fresh', 'reject-no-token']);
    expect(ids(1)).toEqual(['ref-undici-pool', 'jwt-reused', 'direct', 'reject-no-token', 'jwt-fresh']);
    expect(ids(2)).toEqual(['jwt-reused', 'direct', 'ref-undici-pool', 'jwt-fresh', 'reject-no-token']);
  });

  it('puts each compared scenario first in one round of every cycle', () => {
    const firsts = [0, 1, 2].map((round) => roundOrder(scenarios, round, compared)[0]?.id);
    expect(new Set(firsts)).toEqual(new Set(compared));
  });
});

describe('spreadOf', () => {
  it('gives the median with min and max, odd and even counts', () => {
    expect(spreadOf([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, rounds: [3, 1, 2] });
    expect(spreadOf([4, 1, 2, 3])?.median).toBe(2.5);
  });

  it('ignores values that are not finite, and has nothing to say without values', () => {
    expect(spreadOf([Number.NaN, 2, Number.POSITIVE_INFINITY])).toEqual({ median: 2, min: 2, max: 2, rounds: [2] });
    expect(spreadOf([])).toBeUndefined();
  });
});

describe('per-round ratios', () => {
  it('divides figures of the same round only, so a slow round moves both sides of its ratio', () => {
    const runs = [
      run('jwt-reused', 'c64', 1, { cpu: 90 }),
      run('ref-undici-pool', 'c64', 1, { cpu: 100 }),
      run('jwt-reused', 'c64', 2, { cpu: 180 }),
      run('ref-undici-pool', 'c64', 2, { cpu: 200 }),
    ];
    expect(cpuRatioPerRound(runs, 'jwt-reused', 'ref-undici-pool', 'c64')).toEqual([0.9, 0.9]);
  });

  it('leaves out a round that lacks one side, or where the reference measured nothing', () => {
    const runs = [
      run('jwt-reused', 'c64', 1, { cpu: 90 }),
      run('jwt-reused', 'c64', 2, { cpu: 90 }),
      run('ref-undici-pool', 'c64', 2, { cpu: 0 }),
      run('jwt-reused', 'c64', 3, { cpu: 60 }),
      run('ref-undici-pool', 'c64', 3, { cpu: 120 }),
    ];
    expect(cpuRatioPerRound(runs, 'jwt-reused', 'ref-undici-pool', 'c64')).toEqual([0.5]);
  });

  it('takes added p50 against the same round’s direct p50', () => {
    const runs = [
      run('direct', 'c1', 1, { p50: 100, cpu: null }),
      run('jwt-reused', 'c1', 1, { p50: 250 }),
      run('ref-undici-pool', 'c1', 1, { p50: 300 }),
      run('direct', 'c1', 2, { p50: 200, cpu: null }),
      run('jwt-reused', 'c1', 2, { p50: 300 }),
      run('ref-undici-pool', 'c1', 2, { p50: 400 }),
    ];
    expect(addedP50PerRound(runs, 'jwt-reused', 'direct', 'c1')).toEqual([150, 100]);
    expect(addedP50RatioPerRound(runs, 'jwt-reused', 'ref-undici-pool', 'direct', 'c1')).toEqual([0.75, 0.5]);
  });

  it('has no ratio when the reference added nothing over direct', () => {
    const runs = [run('direct', 'c1', 1, { p50: 100, cpu: null }), run('jwt-reused', 'c1', 1, { p50: 150 }), run('ref-undici-pool', 'c1', 1, { p50: 90 })];
    expect(addedP50RatioPerRound(runs, 'jwt-reused', 'ref-undici-pool', 'direct', 'c1')).toEqual([]);
  });
});

describe('summarizeRounds', () => {
  it('reports the ratio the verdicts judge as the median of the rounds, not the ratio of medians', () => {
    // The reference's slow round 3 would put its median CPU at 100 and the ratio of medians at ×0.9; within each
    // round the gateway costs ×1.1, ×1.2, ×0.6.
    const cpu = [
      [110, 100],
      [120, 100],
      [90, 150],
    ];
    const runs = cpu.flatMap(([gateway, pool], index) => [
      run('jwt-reused', 'c64', index + 1, { cpu: gateway }),
      run('ref-undici-pool', 'c64', index + 1, { cpu: pool }),
    ]);
    const summary = summarizeRounds(runs);
    expect(summary.count).toBe(3);
    expect(summary.jwtCpuVsUndiciPool?.median).toBeCloseTo(1.1);
    expect(summary.jwtCpuVsUndiciPool?.min).toBeCloseTo(0.6);
    expect(summary.jwtCpuVsUndiciPool?.max).toBeCloseTo(1.2);
    expect(summary.cpuC64['ref-undici-pool']?.median).toBe(100);
    expect(summary.jwtAddedP50VsUndiciPool).toBeUndefined();
  });
});

describe('formatSpread', () => {
  it('shows the median with its range and the number of rounds', () => {
    expect(formatSpread({ median: 0.934, min: 0.881, max: 1.012, rounds: [1, 2, 3, 4, 5] }, '×')).toBe('×0.93 (0.88–1.01, 5 rounds)');
    expect(formatSpread({ median: 12.34, min: 11, max: 14.2, rounds: [1] }, 'µs')).toBe('12.3 µs (11.0–14.2, 1 round)');
  });
});
