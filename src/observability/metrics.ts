import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CacheStatus } from '../cache/store.js';
import type { RefusalCode } from '../decision/index.js';
import { MEMORY_RECORD_KINDS } from '../config/memory-bounds.js';
import type { AuthCounters } from './auth-counters.js';

/**
 * Prometheus metrics of one gateway, in a registry of its own (several gateways in one process do not collide).
 * Every label value is drawn from a closed set or from the configured route names, never from request input:
 * no token, subject, client id or secret can reach a label.
 */

export const METRIC_PREFIX = 'mcp_gateway_';

/** How a request on an MCP path ended; other 4xx (405, ...) collapse into `4xx`, a client gone before any answer is `aborted`. */
export type RequestOutcome = 'ok' | '400' | '401' | '403' | '404' | '413' | '429' | '4xx' | '5xx' | 'aborted';

/** The upstream's status class, or how the exchange failed. */
export type UpstreamStatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'unreachable' | 'timeout';

export type AuthDecisionKind = 'jwt' | 'introspection';
export type AuthDecisionResult = 'accepted' | 'invalid_token' | 'auth_unavailable';
export type ReloadResult = 'success' | 'failure';

/** The route label of a request on an MCP path that matched no configured route. */
export const UNMATCHED_ROUTE = 'unmatched';

const KNOWN_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PUT', 'PATCH']);
const OWN_OUTCOMES: ReadonlySet<number> = new Set([400, 401, 403, 404, 413, 429]);

export function requestOutcome(status: number | undefined): RequestOutcome {
  if (status === undefined) return 'aborted';
  if (status < 400) return 'ok';
  if (OWN_OUTCOMES.has(status)) return String(status) as RequestOutcome;
  return status < 500 ? '4xx' : '5xx';
}

/** HTTP method label: the method, or `other` (Node accepts ~35 methods; the label set stays small). */
export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'other';
}

const STATUS_CLASSES: readonly UpstreamStatusClass[] = ['1xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

export function upstreamStatusClass(result: number | 'unreachable' | 'timeout'): UpstreamStatusClass {
  if (typeof result !== 'number') return result;
  return STATUS_CLASSES[Math.min(5, Math.max(1, Math.floor(result / 100)))] as UpstreamStatusClass;
}

export interface GatewayMetrics {
  readonly registry: Registry;
  request(route: string, method: string, outcome: RequestOutcome): void;
  /** A verdict of the decision listener: route, the asking proxy's dialect, the status answered. */
  decision(route: string, dialect: string, status: number): void;
  authDecision(route: string, kind: AuthDecisionKind, result: AuthDecisionResult, seconds: number): void;
  upstream(this: void, route: string, statusClass: UpstreamStatusClass, seconds: number): void;
  /** A request refused with a GatewayError, by either front door: its route (or `unmatched`) and the error's code. */
  refusal(route: string, code: RefusalCode): void;
  configReload(result: ReloadResult): void;
  /** Where `cache_available` reads the shared cache's state at each scrape (the last one given counts). */
  watchCache(status: () => CacheStatus): void;
  readonly sseStreamOpened: () => void;
  readonly sseStreamClosed: () => void;
  /** A record of the in-process store evicted to make room, by its kind (`cache.memory.<kind>`). */
  readonly cacheEviction: (kind: string) => void;
  /** Introspection cache and AS counters plus JWKS counters, for the verifiers. */
  readonly authCounters: AuthCounters;
  /** The exposition text and its content type, for `/metrics`. */
  render(): Promise<{ readonly contentType: string; readonly body: string }>;
}

const AUTH_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * What a metric keeps per label set, looked up level by level (one small map per label; no key string is built
 * per observation) and made on first use. The label sets are closed or configured, so the maps stay small.
 */
function childrenOf<Child>(make: (...values: string[]) => Child): (...values: string[]) => Child {
  const root = new Map<string, unknown>();
  return (...values) => {
    let level = root;
    const last = values.length - 1;
    for (let index = 0; index < last; index++) {
      const value = values[index] as string;
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const key = values[last] as string;
    let child = level.get(key) as Child | undefined;
    if (child === undefined) {
      child = make(...values);
      level.set(key, child);
    }
    return child;
  };
}

/** Increments of one label set not yet handed to prom-client. */
interface Tally<Labels> {
  readonly labels: Labels;
  pending: number;
}

/** Observations one label set of a histogram holds before they are handed to prom-client. */
const PENDING_OBSERVATIONS = 256;

/**
 * Observations of one label set of a histogram, handed to prom-client in one loop once PENDING_OBSERVATIONS have
 * gathered and whenever the registry is read (`collect`), so a scrape sees every one. prom-client's observe
 * validates and hashes the labels and looks its bucket up by a string key (~0.4 µs warm, two per request; more
 * between the requests' own work than in one loop). Holding a value is a store (bench/README.md).
 */
class PendingObservations {
  readonly #values = new Float64Array(PENDING_OBSERVATIONS);
  #count = 0;

  constructor(private readonly child: { observe(value: number): void }) {}

  add(value: number): void {
    // prom-client would throw at hand-over, in the middle of a scrape: refused here instead, by the observer.
    if (!Number.isFinite(value)) throw new TypeError(`histogram value is not a finite number: ${value}`);
    this.#values[this.#count] = value;
    this.#count += 1;
    if (this.#count === PENDING_OBSERVATIONS) this.handOver();
  }

  handOver(): void {
    for (let index = 0; index < this.#count; index++) this.child.observe(this.#values[index] as number);
    this.#count = 0;
  }
}

function pendingIn(all: PendingObservations[], child: { observe(value: number): void }): PendingObservations {
  const pending = new PendingObservations(child);
  all.push(pending);
  return pending;
}

function handOverAll(all: readonly PendingObservations[]): void {
  for (const pending of all) pending.handOver();
}

export function createGatewayMetrics(): GatewayMetrics {
  const registry = new Registry();
  const registers = [registry];
  // process_* and nodejs_* series (CPU, memory, event loop lag, GC), unprefixed as dashboards expect them.
  collectDefaultMetrics({ register: registry });

  // Bumped on every request: counted in plain numbers and handed to prom-client when the registry is read (prom-client
  // validates and hashes the labels on every increment, which showed in per-request profiles).
  const requestTallies: Tally<{ route: string; method: string; outcome: string }>[] = [];
  new Counter({
    name: `${METRIC_PREFIX}requests_total`,
    help: 'Requests on MCP paths by route, HTTP method and outcome.',
    labelNames: ['route', 'method', 'outcome'] as const,
    registers,
    collect() {
      for (const tally of requestTallies) {
        if (tally.pending === 0) continue;
        this.inc(tally.labels, tally.pending);
        tally.pending = 0;
      }
    },
  });
  const decisions = new Counter({
    name: `${METRIC_PREFIX}decisions_total`,
    help: 'Verdicts of the decision listener by route, asking proxy (nginx, traefik, envoy) and outcome.',
    labelNames: ['route', 'dialect', 'outcome'] as const,
    registers,
  });
  const pendingAuthDecisions: PendingObservations[] = [];
  const authDecisions = new Histogram({
    name: `${METRIC_PREFIX}auth_decision_seconds`,
    help: 'Time to verify a bearer token, by route, verification kind and result.',
    labelNames: ['route', 'kind', 'result'] as const,
    buckets: AUTH_BUCKETS,
    registers,
    collect: () => handOverAll(pendingAuthDecisions),
  });
  const pendingUpstreamRequests: PendingObservations[] = [];
  const upstreamRequests = new Histogram({
    name: `${METRIC_PREFIX}upstream_request_seconds`,
    help: 'Time until the upstream answered with headers (or failed), by route and status class.',
    labelNames: ['route', 'status_class'] as const,
    buckets: UPSTREAM_BUCKETS,
    registers,
    collect: () => handOverAll(pendingUpstreamRequests),
  });
  const introspectionCache = new Counter({
    name: `${METRIC_PREFIX}introspection_cache_total`,
    help: 'Introspection cache lookups: hit, miss, negative_hit (a cached active:false).',
    labelNames: ['result'] as const,
    registers,
  });
  const introspectionCalls = new Counter({
    name: `${METRIC_PREFIX}introspection_as_requests_total`,
    help: 'Requests sent to introspection endpoints.',
    registers,
  });
  const introspectionErrors = new Counter({
    name: `${METRIC_PREFIX}introspection_as_errors_total`,
    help: 'Introspection attempts without a usable answer (answered 503), by reason.',
    labelNames: ['reason'] as const,
    registers,
  });
  const jwksRefreshes = new Counter({
    name: `${METRIC_PREFIX}jwks_refresh_total`,
    help: 'JWKS fetches by result.',
    labelNames: ['result'] as const,
    registers,
  });
  const jwksRefreshFailures = new Counter({
    name: `${METRIC_PREFIX}jwks_refresh_failures_total`,
    help: 'JWKS fetches that brought no usable key set (the last good one stays in use), by reason.',
    labelNames: ['reason'] as const,
    registers,
  });
  const jwksStaleServes = new Counter({
    name: `${METRIC_PREFIX}jwks_stale_serves_total`,
    help: 'Keys served from a key set past its refresh time because the JWKS endpoint could not be fetched.',
    registers,
  });
  const reloads = new Counter({
    name: `${METRIC_PREFIX}config_reloads_total`,
    help: 'Configuration reloads by result.',
    labelNames: ['result'] as const,
    registers,
  });
  const sseStreams = new Gauge({
    name: `${METRIC_PREFIX}sse_streams_open`,
    help: 'Server-sent event streams currently open to clients.',
    registers,
  });
  const cacheEvictions = new Counter({
    name: `${METRIC_PREFIX}cache_evictions_total`,
    help: 'Records of the in-process store evicted to make room (its cache.memory bound reached), by record kind.',
    labelNames: ['kind'] as const,
    registers,
  });
  for (const result of ['success', 'failure'] as const) reloads.labels({ result }).inc(0);
  const refusals = new Counter({
    name: `${METRIC_PREFIX}refusals_total`,
    help: 'Requests refused by the gateway (proxy and decision listener), by route and error code.',
    labelNames: ['route', 'code'] as const,
    registers,
  });
  let cacheStatus: (() => CacheStatus) | undefined;
  new Gauge({
    name: `${METRIC_PREFIX}cache_available`,
    help: '1 when the shared cache answers (Redis connected, or the in-process cache), 0 while Redis is connecting or failing.',
    labelNames: ['backend'] as const,
    registers,
    collect() {
      if (!cacheStatus) return;
      const { backend, state } = cacheStatus();
      this.reset();
      this.labels({ backend }).set(state === 'ready' ? 1 : 0);
    },
  });
  for (const kind of Object.keys(MEMORY_RECORD_KINDS)) cacheEvictions.labels({ kind }).inc(0);

  const requestTally = childrenOf((route, method, outcome) => {
    const tally = { labels: { route, method, outcome }, pending: 0 };
    requestTallies.push(tally);
    return tally;
  });
  const authDecisionChild = childrenOf((route, kind, result) =>
    pendingIn(pendingAuthDecisions, authDecisions.labels({ route, kind, result })),
  );
  const upstreamChild = childrenOf((route, statusClass) =>
    pendingIn(pendingUpstreamRequests, upstreamRequests.labels({ route, status_class: statusClass })),
  );
  return {
    registry,
    request: (route, method, outcome) => {
      requestTally(route, methodLabel(method), outcome).pending += 1;
    },
    decision: (route, dialect, status) => decisions.labels({ route, dialect, outcome: requestOutcome(status) }).inc(),
    authDecision: (route, kind, result, seconds) => authDecisionChild(route, kind, result).add(seconds),
    upstream: (route, statusClass, seconds) => upstreamChild(route, statusClass).add(seconds),
    refusal: (route, code) => refusals.labels({ route, code }).inc(),
    configReload: (result) => reloads.labels({ result }).inc(),
    watchCache: (status) => {
      cacheStatus = status;
    },
    sseStreamOpened: () => sseStreams.inc(),
    sseStreamClosed: () => sseStreams.dec(),
    cacheEviction: (kind) => cacheEvictions.labels({ kind }).inc(),
    authCounters: {
      cacheHit: () => introspectionCache.labels({ result: 'hit' }).inc(),
      cacheMiss: () => introspectionCache.labels({ result: 'miss' }).inc(),
      negativeHit: () => introspectionCache.labels({ result: 'negative_hit' }).inc(),
      asCall: () => introspectionCalls.inc(),
      asError: (reason) => introspectionErrors.labels({ reason }).inc(),
      jwksRefresh: (result, reason) => {
        jwksRefreshes.labels({ result }).inc();
        if (reason !== undefined) jwksRefreshFailures.labels({ reason }).inc();
      },
      jwksStaleServe: () => jwksStaleServes.inc(),
    },
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}
