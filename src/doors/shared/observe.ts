import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { CONSENT_PATH_PREFIX } from '../../config/rules.js';
import { pathOf } from '../../decision/index.js';
import { auditRecord } from '../../observability/audit.js';
import { requestOutcome, UNMATCHED_ROUTE, upstreamStatusClass, type GatewayMetrics } from '../../observability/metrics.js';
import type { SseStreams } from '../../observability/sse-streams.js';
import { HEALTH_PATHS } from '../public/health.js';
import type { LifecycleRequest } from './lifecycle.js';
import type { DoorRuntime } from './runtime.js';

export interface RequestObserverOptions {
  readonly metrics: GatewayMetrics;
  /** Where the audit lines go. */
  readonly logger: Logger;
}

/** Health, metadata and consent pages are not MCP traffic: they get no request metric and no audit line. */
function isMcpPath(path: string): boolean {
  return !HEALTH_PATHS.has(path) && !path.startsWith('/.well-known/') && !path.startsWith(`${CONSENT_PATH_PREFIX}/`);
}

/**
 * Told once per request by the request lifecycle, with the runtime the request was pinned to (its route table
 * names requests refused before the decision matched a route): when its answer starts, or when the client went
 * away first (no status).
 */
export type RequestAnswered = (request: LifecycleRequest, runtime: DoorRuntime, status: number | undefined, latencyMs: number) => void;

/**
 * Per request on an MCP path: `requests_total` and one `audit` log line (with the request id), when the answer
 * starts or when the client goes away first.
 */
export function requestObserver(options: RequestObserverOptions): RequestAnswered {
  return (request, runtime, status, latencyMs) => {
    const path = pathOf(request.url);
    if (!isMcpPath(path)) return;
    const route = request.decision?.entry?.route.name ?? runtime.routes.get(path)?.route.name ?? UNMATCHED_ROUTE;
    options.metrics.request(route, request.method, requestOutcome(status));
    if (route === UNMATCHED_ROUTE || request.method === 'OPTIONS') return;
    const { auth, message } = request.decision ?? { auth: undefined, message: undefined };
    options.logger.info(auditRecord({ requestId: request.id, route, httpMethod: request.method, auth, message, status, latencyMs }, runtime.auditPrincipal), 'audit');
  };
}

/**
 * Counts an event stream the reply is about to relay, for the `sse_streams_open` gauge and for shutdown. It
 * counts from the moment the stream is piped, which is when shutdown can end it.
 */
export function trackEventStream(response: ServerResponse, streams: SseStreams): void {
  response.once('pipe', (source: Readable) => streams.opened(response, source, response.req.method ?? ''));
}

/** Feeds `upstream_request_seconds`; given to the proxy routes. */
export function upstreamObserver(metrics: GatewayMetrics) {
  return (request: Pick<LifecycleRequest, 'decision'>, result: number | 'unreachable' | 'timeout', elapsedMs: number): void => {
    const route = request.decision?.entry?.route.name ?? UNMATCHED_ROUTE;
    metrics.upstream(route, upstreamStatusClass(result), elapsedMs / 1000);
  };
}
