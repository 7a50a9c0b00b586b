import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { pathOf } from '../decision/index.js';
import { CONSENT_PATH_PREFIX } from '../config/rules.js';
import type { Runtime } from '../runtime.js';
import { auditRecord } from './audit.js';
import type { Readiness } from './health.js';
import { requestOutcome, UNMATCHED_ROUTE, upstreamStatusClass, type GatewayMetrics } from './metrics.js';
import type { SseStreams } from './sse-streams.js';
import { lazyRequestLogger } from './request-logger.js';

export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
export const METRICS_PATH = '/metrics';

/** `/healthz` (the process answers) and `/readyz` (config loaded, verifiers warm, not draining). */
export function registerHealthRoutes(app: FastifyInstance, readinessNow: () => Readiness): void {
  app.get('/healthz', (_request, reply) => reply.send({ status: 'ok' }));
  app.get('/readyz', (_request, reply) => {
    const state = readinessNow();
    return reply.code(state.ready ? 200 : 503).send(state.body);
  });
}

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
export type RequestAnswered = (request: FastifyRequest, runtime: Runtime, status: number | undefined, latencyMs: number) => void;

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
  return (request: FastifyRequest, result: number | 'unreachable' | 'timeout', elapsedMs: number): void => {
    const route = request.decision?.entry?.route.name ?? UNMATCHED_ROUTE;
    metrics.upstream(route, upstreamStatusClass(result), elapsedMs / 1000);
  };
}

export interface AdminServerOptions {
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  readonly readinessNow: () => Readiness;
}

/**
 * The admin listener's app: `/metrics`, `/healthz`, `/readyz`, nothing else. It is a separate server (loopback by
 * default) so metrics and internals are never reachable on the public listener (checklist J5). Never listens.
 */
export function buildAdminServer(options: AdminServerOptions): FastifyInstance {
  const app: FastifyInstance = fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: options.logger.child({ listener: 'admin' }),
    // Scrapes and probes every few seconds would drown the request log.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
  });
  app.get(METRICS_PATH, async (_request, reply) => {
    const { contentType, body } = await options.metrics.render();
    return reply.type(contentType).send(body);
  });
  registerHealthRoutes(app, options.readinessNow);
  return app;
}
