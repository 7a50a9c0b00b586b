import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { Pool } from 'undici';

/** One request to send; built per request so a scenario can give each its own token. */
export interface RequestSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
}

export type RequestFactory = (index: number) => RequestSpec;

export type LoadMode =
  | { readonly kind: 'closed'; readonly connections: number }
  | { readonly kind: 'rate'; readonly perSecond: number; readonly connections: number };

export interface LoadOptions {
  readonly origin: string;
  readonly mode: LoadMode;
  readonly durationMs: number;
  /** Hard cap on requests sent, whatever the duration. */
  readonly maxRequests: number;
  readonly request: RequestFactory;
  readonly expectStatus: number;
}

export interface LoadResult {
  /** Requests answered with the expected status. */
  readonly ok: number;
  /** Answered with another status, failed at the socket, or still unanswered when a fixed-rate run drained. */
  readonly failed: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly elapsedNs: number;
  /** Latency in ns: from the send (closed loop) or from the intended send time (fixed rate). */
  readonly histogram: RecordableHistogram;
}

/** A fixed-rate run waits this long for requests still in flight at its end; later ones count as failed. */
const DRAIN_TIMEOUT_MS = 10_000;
/** Below this gap to the next intended send, the scheduler spins on setImmediate instead of a 1 ms timer. */
const SPIN_BELOW_NS = 2_000_000;

const hrtime = (): number => Number(process.hrtime.bigint());

/** Runs one measurement: closed loop (N workers, each sends when the previous answer arrived) or fixed rate. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(options.origin, {
    connections: options.mode.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
  });
  const histogram = createHistogram();
  const statuses: Record<string, number> = {};
  let ok = 0;
  let failed = 0;
  let sent = 0;

  const send = async (intendedNs: number | undefined): Promise<void> => {
    const spec = options.request(sent);
    sent += 1;
    const startNs = intendedNs ?? hrtime();
    let status = 'error';
    try {
      const response = await pool.request({ method: spec.method, path: spec.path, headers: spec.headers, body: spec.body ?? null });
      await response.body.dump();
      status = String(response.statusCode);
    } catch {
      // counted below as a failure
    }
    histogram.record(Math.max(1, hrtime() - startNs));
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === String(options.expectStatus)) ok += 1;
    else failed += 1;
  };

  const started = hrtime();
  try {
    if (options.mode.kind === 'closed') {
      const endAt = started + options.durationMs * 1e6;
      const worker = async (): Promise<void> => {
        while (sent < options.maxRequests && hrtime() < endAt) await send(undefined);
      };
      await Promise.all(Array.from({ length: options.mode.connections }, worker));
    } else {
      await fixedRate(options.mode.perSecond, Math.min(options.maxRequests, Math.floor((options.durationMs / 1000) * options.mode.perSecond)), send);
    }
    const unanswered = sent - ok - failed;
    if (unanswered > 0) statuses.unanswered = unanswered;
    return { ok, failed: sent - ok, statuses, elapsedNs: hrtime() - started, histogram };
  } finally {
    await pool.destroy();
  }
}

/**
 * Sends request i at start + i/rate whether or not earlier ones were answered, and measures each from that intended
 * time: a stall delays the measured latency of every request scheduled during it (no coordinated omission).
 */
async function fixedRate(perSecond: number, total: number, send: (intendedNs: number) => Promise<void>): Promise<void> {
  const intervalNs = 1e9 / perSecond;
  const start = hrtime();
  const inFlight = new Set<Promise<void>>();
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = hrtime();
      while (next < total && start + next * intervalNs <= now) {
        const flight = send(start + next * intervalNs).finally(() => inFlight.delete(flight));
        inFlight.add(flight);
        next += 1;
      }
      if (next >= total) return resolve();
      const waitNs = start + next * intervalNs - hrtime();
      if (waitNs > SPIN_BELOW_NS) setTimeout(tick, Math.floor((waitNs - SPIN_BELOW_NS / 2) / 1e6));
      else setImmediate(tick);
    };
    tick();
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(inFlight),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
}

/** Latency percentiles in µs. */
export interface LatencySummary {
  readonly p50_us: number;
  readonly p90_us: number;
  readonly p99_us: number;
  readonly p999_us: number;
  readonly max_us: number;
}

export function summarize(histogram: RecordableHistogram): LatencySummary {
  const us = (ns: number): number => Math.round(ns / 100) / 10;
  return {
    p50_us: us(histogram.percentile(50)),
    p90_us: us(histogram.percentile(90)),
    p99_us: us(histogram.percentile(99)),
    p999_us: us(histogram.percentile(99.9)),
    max_us: us(histogram.max),
  };
}
