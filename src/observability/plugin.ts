import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { pathOf } from '../decision/facts.js';
import { CONSENT_PATH_PREFIX } from '../config/rules.js';
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

/** Health, metadata and consent pages are not MCP traffic: they get no request metric and no audit line. */
function isMcpPath(path: string): boolean {
  return !HEALTH_PATHS.has(path) && !path.startsWith('/.well-known/') && !path.startsWith(`${CONSENT_PATH_PREFIX}/`);
}

/** One request on an MCP path, from its start until its metric and audit line are written. */
interface Observation {
  readonly request: FastifyRequest;
  readonly path: string;
  readonly startedAt: number;
  settled: boolean;
}

const OBSERVATION = Symbol('observation');

/** Kept on the raw response, which both fastify's hooks and the response's own events reach. */
type ObservedResponse = ServerResponse & { [OBSERVATION]?: Observation };

/**
 * Per request on an MCP path: `requests_total` and one `audit` log line when the answer starts (or when the client
 * goes away first), and event-stream tracking for the gauge and for shutdown. Listens on the raw response, so it
 * sees what is actually relayed whatever hooks rewrite the payload. One small object per request and two listeners
 * shared by all requests: no per-request closures or weak-table entries.
 */
export function registerRequestObservers(app: FastifyInstance, options: RequestObserverOptions): void {
  const now = options.now ?? (() => performance.now());

  const routeName = (request: FastifyRequest, path: string): string =>
    request.decision?.entry?.route.name ?? options.runtimeOf(request).routes.get(path)?.route.name ?? UNMATCHED_ROUTE;

  /** Undefined for paths that are not MCP traffic. */
  function observe(request: FastifyRequest): Observation | undefined {
    const path = pathOf(request.url);
    return isMcpPath(path) ? { request, path, startedAt: now(), settled: false } : undefined;
  }

  function settle(observation: Observation, status: number | undefined): void {
    if (observation.settled) return;
    observation.settled = true;
    const { request } = observation;
    const route = routeName(request, observation.path);
    options.metrics.request(route, request.method, requestOutcome(status));
    if (route === UNMATCHED_ROUTE || request.method === 'OPTIONS') return;
    const latencyMs = now() - observation.startedAt;
    const { auth, message } = request.decision ?? { auth: undefined, message: undefined };
    request.log.info(auditRecord({ route, httpMethod: request.method, auth, message, status, latencyMs }), 'audit');
  }

  function onPipe(this: ObservedResponse, source: Readable): void {
    if (isEventStream(this.getHeader('content-type'))) options.streams.opened(this, source, this.req.method ?? '');
  }

  function onClose(this: ObservedResponse): void {
    const observation = this[OBSERVATION];
    if (observation) settle(observation, undefined);
  }

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    const response: ObservedResponse = reply.raw;
    response.on('pipe', onPipe);
    const observation = observe(request);
    if (observation) {
      response[OBSERVATION] = observation;
      response.on('close', onClose);
    }
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    // An earlier onRequest hook that failed leaves no observation; the refusal still counts.
    const response: ObservedResponse = reply.raw;
    const observation = response[OBSERVATION] ?? observe(request);
    if (observation) settle(observation, reply.statusCode);
    done(null, payload);
  });
}

/** Feeds `upstream_request_seconds`; given to the proxy routes. */
export function upstreamObserver(metrics: GatewayMetrics) {
  return (request: FastifyRequest, result: number | 'unreachable' | 'timeout', elapsedMs: number): void => {
    metrics.upstream(request.decision?.entry?.route.name ?? UNMATCHED_ROUTE, upstreamStatusClass(result), elapsedMs / 1000);
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
