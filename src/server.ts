import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { pathOf } from './decision/index.js';
import { buildDecisionServer } from './decision-listener/plugin.js';
import { refusalResponse } from './decision/index.js';
import type { RouteVerifier } from './auth/route-verifier.js';
import { resolveCacheKeySecret } from './cache/cache-keys.js';
import type { CacheStore } from './cache/store.js';
import type { CompiledConfig, CompiledRoute } from './config/types.js';
import { GatewayError, isGatewayError } from './decision/index.js';
import { registerJwksRoute } from './identity/plugin.js';
import { createSigningKeySource } from './identity/signing-key.js';
import { registerConsentRoutes } from './consent/plugin.js';
import { registerMetadataRoutes } from './metadata/plugin.js';
import { readiness } from './observability/health.js';
import { createGatewayMetrics, UNMATCHED_ROUTE, type GatewayMetrics } from './observability/metrics.js';
import { buildAdminServer, HEALTH_PATHS, registerHealthRoutes, requestObserver, upstreamObserver } from './observability/plugin.js';
import { runQueued } from './observability/after-turn.js';
import { createSseStreams } from './observability/sse-streams.js';
import { timedVerifiers } from './observability/verifier-timing.js';
import { registerProxyRoutes } from './proxy/plugin.js';
import { createPrincipalSlots } from './ratelimit/principal-slots.js';
import { createGeneration, retireGeneration, warmGeneration } from './reload/generation.js';
import { closeIfBodyUnread, registerRequestLifecycle, type PendingRequest, type PendingRequests } from './reload/plugin.js';
import { restartOnlyChanges } from './reload/restart-only.js';
import { createRuntimeSwitch } from './reload/runtime-switch.js';
import { shutdown } from './reload/shutdown.js';
import type { RuntimeServices, VerifierFactory } from './runtime.js';
import { createSeenSessions } from './session/bindings.js';
import { DEFAULT_MEMORY_BOUNDS } from './config/memory-bounds.js';
import { lazyRequestLogger } from './observability/request-logger.js';

export interface ServerDeps {
  readonly logger: Logger;
  readonly cache: CacheStore;
  readonly verifierFor: (route: CompiledRoute) => RouteVerifier;
  /** HMAC key of cache keys; default: from `cache.key_secret`, else random per process. */
  readonly keySecret?: Buffer;
  /** Default: a new registry (its introspection counters then see nothing: pass the same one to the verifiers). */
  readonly metrics?: GatewayMetrics;
  /** Outgoing requests of upstream credentials and consent (injected in tests). */
  readonly fetch?: typeof fetch;
  /** Clock of upstream credentials and consent, ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

export interface Gateway {
  readonly app: FastifyInstance;
  /** Fetches JWKS etc. so /readyz turns green; never throws. */
  warm(): Promise<void>;
  /** The admin listener's app (/metrics, /healthz, /readyz); never listens by itself. */
  readonly admin: FastifyInstance;
  /** The decision listener's app (nginx, Traefik, Envoy ask here), when `decision` is configured; never listens by itself. */
  readonly decision: FastifyInstance | undefined;
  readonly metrics: GatewayMetrics;
  /** Stops accepting MCP requests (503) and marks /readyz as draining. */
  drain(): void;
  /**
   * Builds and warms a runtime for `config` and swaps it in atomically; requests already running finish on the
   * previous one. Rejects (the previous config keeps serving) when the runtime cannot be built.
   */
  reload(config: CompiledConfig): Promise<void>;
  /** Graceful: drain, end GET event streams, let in-flight requests finish within `shutdown.grace_period`. */
  close(): Promise<void>;
}

/** A replaced runtime is closed at the latest this long after a reload, whatever streams still run on it. */
export const RETIRE_AFTER_MS = 60_000;

/** Maps framework errors (body limit, bad JSON media type, ...) onto the gateway's closed error set. */
function toGatewayError(error: FastifyError | Error): GatewayError | undefined {
  if (isGatewayError(error)) return error;
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new GatewayError('payload_too_large');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return new GatewayError('invalid_jsonrpc', { reason: code });
  }
  return undefined;
}

function sendError(metrics: GatewayMetrics, request: FastifyRequest, reply: FastifyReply, error: GatewayError): void {
  metrics.refusal(request.decision?.entry?.route.name ?? UNMATCHED_ROUTE, error.code);
  const response = refusalResponse(error, request.decision);
  const level = error.code === 'auth_unavailable' || error.code.startsWith('upstream_') ? 'warn' : 'info';
  request.log[level]({ code: error.code, reason: error.reason, route: request.decision?.entry?.route.name }, 'request refused');
  // A refusal before the body was read also closes the connection (the request lifecycle, checklist K10).
  void reply.code(response.statusCode).headers(response.headers).send(response.body);
}

/** Resolves when `reply` has been written out and closed, or after `withinMs` at the latest. */
function closedWithin(reply: FastifyReply, withinMs: number): Promise<void> {
  if (reply.raw.closed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, withinMs);
    reply.raw.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** How often Node looks for requests past `limits.body_timeout` / `limits.header_timeout`. */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** How long the 503s sent at the shutdown deadline may take to reach their clients before connections are cut. */
const DEADLINE_ANSWER_MS = 1_000;

/** Wires the plugins; never listens (tests and main.ts decide where). */
export function buildServer(config: CompiledConfig, deps: ServerDeps): Gateway {
  const metrics = deps.metrics ?? createGatewayMetrics();
  const services: RuntimeServices = {
    store: deps.cache,
    keySecret: deps.keySecret ?? resolveCacheKeySecret(config.cache),
    slots: { streams: createPrincipalSlots(), requestsInFlight: createPrincipalSlots() },
    signingKeys: createSigningKeySource(),
    logger: deps.logger,
    ...(deps.fetch && { fetch: deps.fetch }),
    ...(deps.now && { now: deps.now }),
    // Known sessions are served through a Redis outage; the in-process store needs no second copy.
    ...(deps.cache.status().backend === 'redis' && {
      seenSessions: createSeenSessions({ max: (config.cache.memory ?? DEFAULT_MEMORY_BOUNDS).sessions, onEvict: () => metrics.cacheEviction('sessions') }),
    }),
  };
  metrics.watchCache(() => deps.cache.status());
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: GatewayError) => sendError(metrics, request, reply, error);
  const verifierFor: VerifierFactory = timedVerifiers(deps.verifierFor, metrics);
  const runtimes = createRuntimeSwitch(createGeneration(config, verifierFor, services), {
    retire: retireGeneration,
    retireAfterMs: RETIRE_AFTER_MS,
    onRetireError: (error) => deps.logger.warn({ err: error }, 'closing a replaced runtime failed'),
  });
  const current = () => runtimes.current().runtime;
  const streams = createSseStreams({ onOpen: metrics.sseStreamOpened, onClose: metrics.sseStreamClosed });
  let draining = false;
  let closing: Promise<void> | undefined;
  const readinessNow = () => readiness(current(), deps.cache.status(), draining);

  const app: FastifyInstance = fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: deps.logger,
    // One audit line per decision replaces fastify's two per-request lines: half the gateway's allocations
    // were those lines going through redaction (bench/README.md, profile).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    bodyLimit: config.limits.maxBodyBytes,
    // The whole request (headers and body) must arrive within this; the answer, SSE streams included, is not
    // limited by it (Node stops the timer once the request is complete). Checklist K10.
    requestTimeout: config.limits.bodyTimeout,
    // Node checks those timers this often (its default, 30 s, would let a stalled body live 30 s past them).
    http: { connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    return503OnClosing: true,
    // A path fastify cannot decode never reaches a hook: a generic 400 that does not echo the path.
    frameworkErrors: (_error, request, reply: FastifyReply) => {
      closeIfBodyUnread(request, reply);
      void reply.code(400).type('application/json').send({ error: 'bad_request' });
    },
  });
  app.decorateRequest('decision', null);
  app.decorateRequest('decisionFacts', null);
  app.server.headersTimeout = config.limits.headerTimeout;

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const gatewayError = toGatewayError(error);
    if (gatewayError) {
      refuse(request, reply, gatewayError);
      return;
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      // A client-side framework error (malformed URL, bad header): precise status, generic body.
      void reply.code(error.statusCode).type('application/json').send({ error: 'bad_request' });
      return;
    }
    request.log.error({ err: error }, 'unexpected error');
    void reply.code(500).type('application/json').send({ error: 'internal_error' });
  });

  // First: every request is pinned and tracked (refused at once while draining), counted and audited.
  const observe = requestObserver({ metrics, logger: deps.logger });
  const lifecycle = registerRequestLifecycle(app, runtimes, {
    refuse: (request) => (draining && !HEALTH_PATHS.has(pathOf(request.url)) ? new GatewayError('draining') : undefined),
    onAnswered: (request, generation, status, latencyMs) => observe(request, generation.runtime, status, latencyMs),
  });
  const generationOf = lifecycle.runtimeOf;
  // Requests and connections of both front doors: shutdown treats them alike.
  const doors: PendingRequests[] = [lifecycle.pending];
  const runtimeOf = (request: FastifyRequest) => generationOf(request).runtime;

  registerHealthRoutes(app, readinessNow);
  registerMetadataRoutes(app, () => current().config);
  registerJwksRoute(app, () => current().signingKey?.publicJwk);
  registerConsentRoutes(app, { consentOf: (request) => runtimeOf(request).consent, publicUrl: config.publicUrl });
  registerProxyRoutes(app, {
    current: runtimeOf,
    dispatcherOf: (request, route) => {
      const dispatcher = generationOf(request).dispatchers.get(route);
      if (!dispatcher) throw new Error(`no upstream pool for route ${route}`);
      return dispatcher;
    },
    maxBodyBytes: config.limits.maxBodyBytes,
    sendError: refuse,
    eventStreams: streams,
    onUpstreamResult: upstreamObserver(metrics),
  });
  const admin = buildAdminServer({ logger: deps.logger, metrics, readinessNow });
  const decision =
    config.decision &&
    buildDecisionServer({
      logger: deps.logger,
      metrics,
      settings: config.decision,
      maxBodyBytes: config.limits.maxBodyBytes,
      pinRuntimes: (decisionApp) => {
        const decisionLifecycle = registerRequestLifecycle(decisionApp, runtimes);
        doors.push(decisionLifecycle.pending);
        return (request) => decisionLifecycle.runtimeOf(request).runtime;
      },
      draining: () => draining,
    });

  return {
    app,
    admin,
    decision,
    metrics,
    warm: () => warmGeneration(runtimes.current()),
    drain: () => {
      draining = true;
    },
    reload: async (next) => {
      if (closing) throw new Error('the gateway is shutting down');
      try {
        const generation = createGeneration(next, verifierFor, services);
        await warmGeneration(generation);
        if (closing) {
          await retireGeneration(generation);
          throw new Error('the gateway is shutting down');
        }
        runtimes.swap(generation);
      } catch (error) {
        metrics.configReload('failure');
        throw error;
      }
      metrics.configReload('success');
      deps.logger.level = next.logLevel;
      app.server.requestTimeout = next.limits.bodyTimeout;
      app.server.headersTimeout = next.limits.headerTimeout;
      const ignored = restartOnlyChanges(config, next);
      if (ignored.length > 0) deps.logger.warn({ paths: ignored }, 'config reload: these settings take effect after a restart');
    },
    close: () => {
      closing ??= (async () => {
        const refuseDraining = ([request, reply]: PendingRequest) => refuse(request, reply, new GatewayError('draining'));
        const result = await shutdown({
          drain: () => {
            draining = true;
          },
          refuseHalfSent: () => doors.flatMap((door) => door.halfSent()).forEach(refuseDraining),
          answerUnanswered: async () => {
            const unanswered = doors.flatMap((door) => door.unanswered());
            unanswered.forEach(refuseDraining);
            await Promise.all(unanswered.map(([, reply]) => closedWithin(reply, DEADLINE_ANSWER_MS)));
          },
          streams,
          idle: runtimes.idle,
          closeListener: () => {
            const closed = Promise.all([app.close(), decision?.close()]);
            // Stopped listening: a connection without a request (nothing sent yet, headers still arriving) is owed
            // nothing and must not hold the exit until the grace deadline.
            for (const socket of doors.flatMap((door) => door.connectionsWithoutRequest())) socket.destroy();
            return closed.then(() => undefined);
          },
          dropConnections: () => {
            app.server.closeAllConnections();
            decision?.server.closeAllConnections();
          },
          graceMs: current().config.shutdown.gracePeriod,
        });
        if (result === 'forced') deps.logger.warn('shutdown grace period over: remaining connections were cut');
        await Promise.all([runtimes.close(), admin.close(), deps.cache.close()]);
        // The last requests' audit lines and metrics, before the process exits.
        runQueued();
      })();
      return closing;
    },
  };
}
