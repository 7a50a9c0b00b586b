import type { ResultRow } from './results.js';
import { formatSpread, type RoundsSummary, type Spread } from './rounds.js';
import type { StreamCheck } from './sse.js';

export interface KidStormRun {
  readonly requests: number;
  readonly rps: number;
  readonly durationMs: number;
  readonly jwksFetches: number;
  readonly statuses: Readonly<Record<string, number>>;
}

export interface SseOpenSample {
  readonly opened: number;
  readonly failed: number;
  /** Gateway RSS just before the streams opened, and with all of them open. */
  readonly rssBeforeMb: number;
  readonly rssOpenMb: number;
}

export interface SseOpenResult {
  readonly streams: number;
  /** In the gateway that served every load run before (its heap has grown to its working size). */
  readonly afterLoad: SseOpenSample;
  /** In a freshly started gateway: what the streams themselves cost. */
  readonly fresh: SseOpenSample;
}

/** Scenarios that are not a request loop. */
export interface SpecialResults {
  readonly kidStorm: { readonly cooldownMs: number; readonly runs: readonly KidStormRun[] };
  readonly sseStream: { readonly events: number; readonly direct: readonly StreamCheck[]; readonly gateway: readonly StreamCheck[] };
  readonly sseOpen: SseOpenResult | undefined;
}

export interface TargetResult {
  readonly id: string;
  readonly target: string;
  readonly value: string;
  /** null when the run did not measure it (e.g. --quick left the scenario out), or for a figure only reported. */
  readonly met: boolean | null;
}

const find = (rows: readonly ResultRow[], id: string, mode: string): ResultRow | undefined =>
  rows.find((row) => row.id === id && row.mode === mode);

export const NOT_MEASURED = 'not measured in this run';

const unmeasured = (id: string, target: string): TargetResult => ({ id, target, value: NOT_MEASURED, met: null });

/**
 * The targets: absolute figures from the medians of this run, comparisons with the reference proxies
 * from the medians of per-round ratios (`rounds`).
 */
export function evaluateTargets(rows: readonly ResultRow[], special: SpecialResults, rounds: RoundsSummary): TargetResult[] {
  const results: TargetResult[] = [];

  const jwtC1 = find(rows, 'jwt-reused', 'c1');
  const addedP50 = 'added p50 at 1 connection, JWT reused token ≤ 100 µs';
  results.push(
    jwtC1?.added_p50_us != null
      ? { id: 'jwt-added-p50', target: addedP50, value: `${jwtC1.added_p50_us} µs (p50 ${jwtC1.p50_us} µs)`, met: jwtC1.added_p50_us <= 100 }
      : unmeasured('jwt-added-p50', addedP50),
  );

  const jwtC64 = find(rows, 'jwt-reused', 'c64');
  const cpuTarget = 'gateway CPU per request, JWT reused token ≤ 80 µs (1/rps − 1/rps(direct), 64 connections)';
  results.push(
    jwtC64?.derived_cpu_us_per_req != null
      ? {
          id: 'jwt-cpu',
          target: cpuTarget,
          value: `${jwtC64.derived_cpu_us_per_req} µs derived; ${jwtC64.cpu_us_per_req ?? '?'} µs measured (gateway process)`,
          met: jwtC64.derived_cpu_us_per_req <= 80,
        }
      : unmeasured('jwt-cpu', cpuTarget),
  );

  // Relative to the reference proxies: medians of ratios taken within each round (bench/rounds.ts).
  const roundsNote = (spread: Spread | undefined, own: Spread | undefined, base: Spread | undefined): string =>
    `${spread ? formatSpread(spread, '×') : '?'}; ${own ? own.median.toFixed(1) : '?'} vs ${base ? base.median.toFixed(1) : '?'} µs (medians)`;
  const ratioTarget = (id: string, target: string, spread: Spread | undefined, own: Spread | undefined, base: Spread | undefined): TargetResult =>
    spread ? { id, target, value: roundsNote(spread, own, base), met: spread.median <= 1 } : unmeasured(id, target);

  results.push(
    ratioTarget(
      'jwt-cpu-vs-undici-pool',
      'gateway CPU per request (JWT reused, 64 connections) ≤ 1.00× bare node:http + undici Pool (median of per-round ratios)',
      rounds.jwtCpuVsUndiciPool,
      rounds.cpuC64['jwt-reused'],
      rounds.cpuC64['ref-undici-pool'],
    ),
    ratioTarget(
      'jwt-p50-vs-undici-pool',
      'added p50 at 1 connection, JWT reused ≤ the bare node:http + undici Pool proxy’s (median of per-round ratios)',
      rounds.jwtAddedP50VsUndiciPool,
      rounds.addedP50C1['jwt-reused'],
      rounds.addedP50C1['ref-undici-pool'],
    ),
    ratioTarget(
      'jwt-cpu-vs-reply-from',
      'gateway CPU per request (JWT reused, 64 connections) ≤ 1.00× bare fastify + reply-from (median of per-round ratios)',
      rounds.jwtCpuVsReplyFrom,
      rounds.cpuC64['jwt-reused'],
      rounds.cpuC64['ref-reply-from'],
    ),
    ratioTarget(
      'jwt-p50-vs-reply-from',
      'added p50 at 1 connection, JWT reused ≤ the bare fastify + reply-from proxy’s (median of per-round ratios)',
      rounds.jwtAddedP50VsReplyFrom,
      rounds.addedP50C1['jwt-reused'],
      rounds.addedP50C1['ref-reply-from'],
    ),
  );

  const decision = rounds.cpuC64['decision-nginx'];
  const decisionCost = 'decision listener (nginx auth_request style): CPU per decision, reported against a proxied JWT request';
  results.push(
    decision && rounds.decisionCpuVsJwt
      ? { id: 'decision-cost', target: decisionCost, value: `${formatSpread(decision, 'µs')} per decision, ${formatSpread(rounds.decisionCpuVsJwt, '×')} of a proxied request`, met: null }
      : unmeasured('decision-cost', decisionCost),
  );

  const hit = rounds.introspectionHitCpuVsJwt;
  const hitTarget = 'introspection with a Redis hit within 15 % of the JWT figure (gateway CPU per request, median of per-round ratios)';
  results.push(
    hit
      ? {
          id: 'introspection-hit',
          target: hitTarget,
          value: `${formatSpread(hit, '×')}; ${rounds.cpuC64['introspection-hit']?.median.toFixed(1) ?? '?'} vs ${rounds.cpuC64['jwt-reused']?.median.toFixed(1) ?? '?'} µs (medians)`,
          met: hit.median <= 1.15,
        }
      : unmeasured('introspection-hit', hitTarget),
  );

  const calc = find(rows, 'calc-gateway', 'c64');
  const calcTarget = 'calculator upstream, gateway on its own core: ≥ 0.95× direct throughput (64 connections)';
  results.push(
    calc?.ratio_vs_direct != null
      ? { id: 'calculator', target: calcTarget, value: `×${calc.ratio_vs_direct} (${calc.rps} vs ${find(rows, 'calc-direct', 'c64')?.rps} req/s)`, met: calc.ratio_vs_direct >= 0.95 }
      : unmeasured('calculator', calcTarget),
  );

  const fixed = find(rows, 'jwt-reused', 'r1000');
  const p99Target = 'p99 at a fixed 1,000 req/s ≤ 10 ms (JWT reused token, corrected for coordinated omission)';
  results.push(
    fixed
      ? { id: 'p99-1000', target: p99Target, value: `${fixed.p99_us} µs (max of reps ${fixed.range.p99_us[1]} µs)`, met: fixed.p99_us <= 10_000 && fixed.failed === 0 }
      : unmeasured('p99-1000', p99Target),
  );

  const open = special.sseOpen;
  const rssTarget = `gateway RSS with ${open?.streams ?? 1000} open SSE streams < 150 MB (fresh gateway; after the load runs in brackets)`;
  results.push(
    open
      ? {
          id: 'sse-rss',
          target: rssTarget,
          value: `${open.fresh.rssOpenMb} MB (${open.fresh.rssBeforeMb} MB idle, ${open.fresh.opened}/${open.streams} open) [${open.afterLoad.rssOpenMb} MB, ${open.afterLoad.rssBeforeMb} MB before]`,
          met: open.fresh.rssOpenMb < 150 && open.fresh.failed === 0,
        }
      : unmeasured('sse-rss', rssTarget),
  );

  const streams = special.sseStream.gateway;
  const orderTarget = `one SSE stream of ${special.sseStream.events} events through the gateway: all arrive, in order`;
  results.push(
    streams.length > 0
      ? {
          id: 'sse-order',
          target: orderTarget,
          value: streams.map((check) => `${check.events} events${check.inOrder ? ' in order' : ' OUT OF ORDER'}`).join('; '),
          met: streams.every((check) => check.status === 200 && check.inOrder && check.events === special.sseStream.events),
        }
      : unmeasured('sse-order', orderTarget),
  );

  const storm = special.kidStorm.runs;
  const stormTarget = `unknown-kid storm: at most one JWKS fetch per cooldown (${special.kidStorm.cooldownMs / 1000} s)`;
  results.push(
    storm.length > 0
      ? {
          id: 'kid-storm',
          target: stormTarget,
          value: storm.map((run) => `${run.jwksFetches} fetch(es) for ${run.requests} requests in ${(run.durationMs / 1000).toFixed(1)} s`).join('; '),
          met: storm.every((run) => run.jwksFetches <= Math.max(1, Math.ceil(run.durationMs / special.kidStorm.cooldownMs))),
        }
      : unmeasured('kid-storm', stormTarget),
  );
  return results;
}
