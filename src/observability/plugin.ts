import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { requestPath } from '../auth/plugin.js';
import type { Runtime } from '../runtime.js';
import { auditRecord } from './audit.js';
import type { Readiness } from './health.js';
import { requestOutcome, UNMATCHED_ROUTE, upstreamStatusClass, type GatewayMetrics } from './metrics.js';
import { isEventStream } from '../media-type.js';
import type { SseStreams } from './sse-streams.js';

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
  readonly streams: SseStreams;
  /** The runtime the request started on (route lookup for requests refused before the auth hook ran). */
  readonly runtimeOf: (request: FastifyRequest) => Runtime;
  readonly now?: () => number;
}

/** Health and metadata paths are not MCP traffic: they get no request metric and no audit line. */
function isMcpPath(path: string): boolean {
  return !HEALTH_PATHS.has(path) && !path.startsWith('/.well-known/');
}

/**
 * Per request on an MCP path: `requests_total` and one `audit` log line when the answer starts (or when the client
 * goes away first), and event-stream tracking for the gauge and for shutdown. Listens on the raw response, so it
 * sees what is actually relayed whatever hooks rewrite the payload.
 */
export function registerRequestObservers(app: FastifyInstance, options: RequestObserverOptions): void {
  const now = options.now ?? (() => performance.now());
  const settled = new WeakSet<FastifyRequest>();
  const startedAt = new WeakMap<FastifyRequest, number>();

  const routeName = (request: FastifyRequest, path: string): string =>
    request.mcp?.entry.route.name ?? options.runtimeOf(request).routes.get(path)?.route.name ?? UNMATCHED_ROUTE;

  function settle(request: FastifyRequest, status: number | undefined): void {
    if (settled.has(request)) return;
    const path = requestPath(request.url);
    if (!isMcpPath(path)) return;
    settled.add(request);
    const route = routeName(request, path);
    options.metrics.request(route, request.method, requestOutcome(status));
    if (route === UNMATCHED_ROUTE || request.method === 'OPTIONS') return;
    const latencyMs = now() - (startedAt.get(request) ?? now());
    const { auth, message } = request.mcp ?? { auth: undefined, message: undefined };
    request.log.info(auditRecord({ route, httpMethod: request.method, auth, message, status, latencyMs }), 'audit');
  }

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    startedAt.set(request, now());
    const response = reply.raw;
    response.on('pipe', (source: Readable) => {
      if (isEventStream(response.getHeader('content-type'))) options.streams.opened(response, source, request.method);
    });
    response.once('close', () => settle(request, undefined));
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    settle(request, reply.statusCode);
    done(null, payload);
  });
}

/** Feeds `upstream_request_seconds`; given to the proxy routes. */
export function upstreamObserver(metrics: GatewayMetrics) {
  return (request: FastifyRequest, result: number | 'unreachable' | 'timeout', elapsedMs: number): void => {
    metrics.upstream(request.mcp?.entry.route.name ?? UNMATCHED_ROUTE, upstreamStatusClass(result), elapsedMs / 1000);
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
  });
  app.get(METRICS_PATH, async (_request, reply) => {
    const { contentType, body } = await options.metrics.render();
    return reply.type(contentType).send(body);
  });
  registerHealthRoutes(app, options.readinessNow);
  return app;
}
