import type { LatencySummary } from './load.js';
import type { LoadScenario, ModeName, Via } from './scenarios.js';

/** One measured run of one scenario in one mode. */
export interface RunRecord extends LatencySummary {
  readonly scenario: string;
  readonly mode: ModeName;
  readonly rep: number;
  readonly rps: number;
  readonly ok: number;
  readonly failed: number;
  readonly statuses: Readonly<Record<string, number>>;
  /** CPU (user + system, all threads) of the proxy in the path (gateway or reference) per request; null when direct. */
  readonly proxyCpuUsPerReq: number | null;
  readonly upstreamCpuUsPerReq: number;
  /** RSS of the proxy in the path (the gateway's for direct runs). */
  readonly proxyRssMb: number;
}

type Range = readonly [number, number];

/** The figures of one scenario in one mode across repetitions: medians, with [min, max] in `range`. */
export interface ResultRow {
  readonly id: string;
  readonly label: string;
  readonly mode: ModeName;
  readonly via: Via;
  readonly baseline: string;
  readonly reps: number;
  readonly rps: number;
  readonly p50_us: number;
  readonly p90_us: number;
  readonly p99_us: number;
  readonly p999_us: number;
  readonly max_us: number;
  /** rps / rps of the baseline (direct) scenario in the same mode. */
  readonly ratio_vs_direct: number | null;
  /** CPU per request of the proxy in the path (gateway or reference), measured from /proc; null for direct rows. */
  readonly cpu_us_per_req: number | null;
  /** Closed-loop only: 1/rps − 1/rps(direct), the server core's extra time per request (gateway + its hop). */
  readonly derived_cpu_us_per_req: number | null;
  readonly added_p50_us: number | null;
  readonly added_p99_us: number | null;
  readonly upstream_cpu_us_per_req: number;
  readonly rss_mb: number | null;
  readonly failed: number;
  readonly range: {
    readonly rps: Range;
    readonly p50_us: Range;
    readonly p99_us: Range;
    readonly cpu_us_per_req: Range | null;
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;
const range = (values: readonly number[], digits = 1): Range => [round(Math.min(...values), digits), round(Math.max(...values), digits)];

/** Folds the runs into one row per (scenario, mode), then adds the comparisons with each row's baseline. */
export function aggregate(scenarios: readonly LoadScenario[], runs: readonly RunRecord[]): ResultRow[] {
  const base = new Map<string, Omit<ResultRow, 'ratio_vs_direct' | 'derived_cpu_us_per_req' | 'added_p50_us' | 'added_p99_us'>>();
  for (const scenario of scenarios) {
    for (const mode of new Set(runs.filter((run) => run.scenario === scenario.id).map((run) => run.mode))) {
      const mine = runs.filter((run) => run.scenario === scenario.id && run.mode === mode);
      const pick = (field: keyof LatencySummary | 'rps' | 'upstreamCpuUsPerReq' | 'proxyRssMb'): number[] => mine.map((run) => run[field]);
      const cpu = mine.map((run) => run.proxyCpuUsPerReq).filter((value): value is number => value !== null);
      const proxied = scenario.via !== 'direct';
      base.set(`${scenario.id}@${mode}`, {
        id: scenario.id,
        label: scenario.label,
        mode,
        via: scenario.via,
        baseline: scenario.baseline,
        reps: mine.length,
        rps: round(median(pick('rps')), 0),
        p50_us: round(median(pick('p50_us'))),
        p90_us: round(median(pick('p90_us'))),
        p99_us: round(median(pick('p99_us'))),
        p999_us: round(median(pick('p999_us'))),
        max_us: round(median(pick('max_us'))),
        cpu_us_per_req: proxied && cpu.length > 0 ? round(median(cpu)) : null,
        upstream_cpu_us_per_req: round(median(pick('upstreamCpuUsPerReq'))),
        rss_mb: proxied ? round(median(pick('proxyRssMb'))) : null,
        failed: mine.reduce((sum, run) => sum + run.failed, 0),
        range: {
          rps: range(pick('rps'), 0),
          p50_us: range(pick('p50_us')),
          p99_us: range(pick('p99_us')),
          cpu_us_per_req: proxied && cpu.length > 0 ? range(cpu) : null,
        },
      });
    }
  }
  return [...base.values()].map((row) => {
    const direct = base.get(`${row.baseline}@${row.mode}`);
    const closed = row.mode === 'c1' || row.mode === 'c64';
    const compared = direct !== undefined && row.id !== row.baseline;
    return {
      ...row,
      ratio_vs_direct: direct ? round(row.rps / direct.rps, 3) : null,
      derived_cpu_us_per_req: compared && closed && row.id !== 'calc-gateway' ? round(1e6 / row.rps - 1e6 / direct.rps) : null,
      added_p50_us: compared ? round(row.p50_us - direct.p50_us) : null,
      added_p99_us: compared ? round(row.p99_us - direct.p99_us) : null,
    };
  });
}
