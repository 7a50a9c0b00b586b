import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { RouteVerifier } from '../auth/route-verifier.js';
import { resolveCacheKeySecret } from './cache-store.js';
import type { CacheStore } from '../cache/store.js';
import { DEFAULT_MEMORY_BOUNDS } from '../config/memory-bounds.js';
import type { CompiledConfig, CompiledRoute } from '../config/types.js';
import { GatewayError, pathOf } from '../decision/index.js';
import { buildAdminServer } from '../doors/admin.js';
import { registerAuthorizationServerRoutes } from '../doors/authorization-server.js';
import { registerConsentRoutes } from '../doors/consent.js';
import { buildDecisionServer } from '../doors/decision-listener/plugin.js';
import { buildMainListener, requestIdOf, type FrontDoor } from '../doors/main-listener.js';
import { createProxyDoor, registerUnmatchedPaths } from '../doors/proxy/plugin.js';
import { HEALTH_PATHS, registerHealthRoutes } from '../doors/public/health.js';
import { registerJwksRoute } from '../doors/public/jwks.js';
import { registerMetadataRoutes } from '../doors/public/metadata.js';
import {
  createRequestTracker,
  registerRequestLifecycle,
  serveLifecycle,
  type LifecycleRequest,
  type PendingRequest,
  type PendingRequests,
} from '../doors/shared/lifecycle.js';
import { requestObserver, upstreamObserver } from '../doors/shared/observe.js';
import { refusalAnswer, sendRefusal } from '../doors/shared/refusal.js';
import { createSigningKeySource } from '../identity/signing-key.js';
import { hashedPrincipal } from '../observability/audit.js';
import { runQueued } from '../observability/after-turn.js';
import { readiness } from '../observability/health.js';
import { createGatewayMetrics, type GatewayMetrics } from '../observability/metrics.js';
import { createSseStreams } from '../observability/sse-streams.js';
import { createPrincipalSlots } from '../ratelimit/principal-slots.js';
import { restartOnlyChanges } from '../reload/restart-only.js';
import { createRuntimeSwitch } from '../reload/runtime-switch.js';
import { shutdown } from '../reload/shutdown.js';
import { createSeenSessions } from '../session/bindings.js';
import { createGeneration, retireGeneration, warmGeneration } from './generation.js';
import type { RuntimeServices, VerifierFactory } from './runtime.js';
import type { GatewayTracing } from './tracing.js';
import { timedVerifiers } from './verifier-timing.js';

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
  /** OpenTelemetry traces, when `telemetry.traces` is set (started by startTracing); shut down with the gateway. */
  readonly tracing?: GatewayTracing;
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

/** Resolves when `response` has been written out and closed, or after `withinMs` at the latest. */
function closedWithin(response: ServerResponse, withinMs: number): Promise<void> {
  if (response.closed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, withinMs);
    response.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

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
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: GatewayError) => sendRefusal(metrics, request, reply, error);
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

  // The proxy door serves the routes' requests on Node's own request and response; fastify everything else.
  const front: FrontDoor = { claim: undefined };
  const app = buildMainListener(config.limits, deps.logger, metrics, front);
  // Callers are named in spans by the keyed hash `log.audit_subject: hashed` writes, whatever the audit lines use.
  const tracing = deps.tracing?.forDoors(hashedPrincipal(services.keySecret));
  // Before any hook of fastify's routes: every request's span is open when the first of them runs. Probes get
  // none. The proxy door's requests never reach these hooks: the door starts their spans itself.
  tracing?.register(app, { ignore: (path) => HEALTH_PATHS.has(path) });

  // First: every request is pinned and tracked (refused at once while draining), counted and audited, through one
  // lifecycle whichever door serves it.
  const observe = requestObserver({ metrics, logger: deps.logger });
  const lifecycle = createRequestTracker(runtimes, {
    refuse: (request: LifecycleRequest) => (draining && !HEALTH_PATHS.has(pathOf(request.url)) ? new GatewayError('draining') : undefined),
    onAnswered: (request, generation, status, latencyMs) => observe(request, generation.runtime, status, latencyMs),
  });
  serveLifecycle(app, lifecycle, refuse);
  const generationOf = (request: LifecycleRequest) => lifecycle.runtimeOf(request);
  // Requests and connections of both front doors: shutdown treats them alike.
  const doors: PendingRequests[] = [lifecycle.pending];
  const runtimeOf = (request: LifecycleRequest) => generationOf(request).runtime;

  registerHealthRoutes(app, readinessNow);
  registerMetadataRoutes(app, () => current().config);
  registerJwksRoute(app, () => current().signingKey?.publicJwk);
  registerConsentRoutes(app, {
    consentOf: (request) => runtimeOf(request).consent,
    authorizationServerSignInOf: (request) => {
      const server = runtimeOf(request).authorizationServer;
      return server && ((input) => server.signInCallback(input));
    },
    publicUrl: config.publicUrl,
  });
  const authorizationServer = current().authorizationServer;
  if (authorizationServer) {
    registerAuthorizationServerRoutes(app, {
      paths: authorizationServer.paths,
      serverOf: (request) => runtimeOf(request).authorizationServer,
      trustedProxiesOf: (request) => runtimeOf(request).config.trustedProxies,
      publicUrl: config.publicUrl,
      logError: (request, error) => request.log.error({ err: error }, 'authorization server request failed'),
    });
  }
  registerUnmatchedPaths(app, config.limits.maxBodyBytes);
  front.claim = createProxyDoor({
    lifecycle,
    current: runtimeOf,
    routes: (path) => current().routes.has(path),
    dispatcherOf: (request, route) => {
      const dispatcher = generationOf(request).dispatchers.get(route);
      if (!dispatcher) throw new Error(`no upstream pool for route ${route}`);
      return dispatcher;
    },
    maxBodyBytes: config.limits.maxBodyBytes,
    refusal: (request, error) => refusalAnswer(metrics, request, error),
    logger: deps.logger,
    requestId: requestIdOf,
    eventStreams: streams,
    onUpstreamResult: upstreamObserver(metrics),
    ...(tracing && { tracing }),
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
        const decisionLifecycle = registerRequestLifecycle(decisionApp, runtimes, refuse);
        doors.push(decisionLifecycle.pending);
        return (request) => decisionLifecycle.runtimeOf(request).runtime;
      },
      draining: () => draining,
      ...(tracing && { tracing }),
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
        const refuseDraining = ([, responder]: PendingRequest) => responder.refuse(new GatewayError('draining'));
        const result = await shutdown({
          drain: () => {
            draining = true;
          },
          refuseHalfSent: () => doors.flatMap((door) => door.halfSent()).forEach(refuseDraining),
          answerUnanswered: async () => {
            const unanswered = doors.flatMap((door) => door.unanswered());
            unanswered.forEach(refuseDraining);
            await Promise.all(unanswered.map(([, responder]) => closedWithin(responder.response, DEADLINE_ANSWER_MS)));
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
        // The last requests' audit lines and metrics, before the process exits; then their spans.
        runQueued();
        await deps.tracing?.provider.shutdown();
      })();
      return closing;
    },
  };
}
