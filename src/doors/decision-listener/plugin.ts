import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DECISION_SECRET_HEADER } from '../../config/schema.js';
import type { Secret } from '../../config/secret.js';
import { compileTrustedProxies } from '../../config/trusted-proxies.js';
import type { DecisionListenerSettings, DecisionProxy } from '../../config/types.js';
import {
  admit,
  authorize,
  createDecisionState,
  GatewayError,
  isGatewayError,
  refusalResponse,
  type DecisionState,
  type ErrorResponse,
  type RequestFacts,
} from '../../decision/index.js';
import { acceptEveryMethod, keepRawBodies } from '../shared/raw-body.js';
import { afterTurn } from '../../observability/after-turn.js';
import { auditRecord } from '../../observability/audit.js';
import { UNMATCHED_ROUTE, type GatewayMetrics } from '../../observability/metrics.js';
import { lazyRequestLogger } from '../shared/request-logger.js';
import { requestFacts } from '../shared/request-facts.js';
import type { DoorRuntime } from '../shared/runtime.js';
import type { DoorTracing } from '../shared/tracing.js';
import { originalRequest } from './original-request.js';
import { allowHeaders, refusalForProxy } from './verdict.js';

export interface DecisionServerOptions {
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  /** `decision` as the gateway started with it; a reload's own settings (proxy, secret, path prefix) apply at once. */
  readonly settings: DecisionListenerSettings;
  /** The largest body Envoy may send with the request (`with_request_body`); fixed at start like the proxy's. */
  readonly maxBodyBytes: number;
  /** Pins every request of `app` to the runtime current when it arrived (reloads swap it); returns the lookup. */
  readonly pinRuntimes: (app: FastifyInstance) => (request: FastifyRequest) => DoorRuntime;
  /** True while shutting down: new decisions get 503 so the proxy retries elsewhere. */
  readonly draining: () => boolean;
  /** Spans, when `telemetry.traces` is set: a question joins the trace of the request the proxy holds (its traceparent). */
  readonly tracing?: DoorTracing;
}

/** Envoy sends this when `with_request_body.allow_partial_message` cut the body: a partial message decides nothing. */
const PARTIAL_BODY_HEADER = 'x-envoy-auth-partial-body';

/** The whole body Envoy sent with the question, if any. */
function bodyOf(request: FastifyRequest): Buffer | undefined {
  if (!Buffer.isBuffer(request.body) || request.body.length === 0) return undefined;
  return request.headers[PARTIAL_BODY_HEADER] === 'true' ? undefined : request.body;
}

/**
 * Front door 2 (ARCHITECTURE.md): the decision listener. A proxy that holds a client's request (nginx
 * `auth_request`, Traefik `forwardAuth`, Envoy `ext_authz` HTTP) asks here; the same pipeline as the gateway's own
 * proxy decides. Allowed → 200 with the headers to set upstream; refused → exactly the status, WWW-Authenticate and
 * body the proxy mode would answer. Never listens by itself.
 */
export function buildDecisionServer(options: DecisionServerOptions): FastifyInstance {
  const logger = options.logger.child({ listener: 'decision' });
  const app: FastifyInstance = fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: options.maxBodyBytes,
  });
  options.tracing?.register(app, {});
  keepRawBodies(app, options.maxBodyBytes);
  const methods = acceptEveryMethod(app);
  const runtimeOf = options.pinRuntimes(app);

  let warnedBodyless = false;
  const unauthenticatedLog = onceAMinute();

  /** The request the proxy asks about, once the question proved it comes from that proxy; else the refusal. */
  function describedRequest(request: FastifyRequest, runtime: DoorRuntime, settings: DecisionListenerSettings): RequestFacts {
    const dialect = settings.proxy;
    if (options.draining()) throw new GatewayError('draining');
    if (!fromProxy(request, settings.secret)) {
      if (unauthenticatedLog()) logger.warn({ dialect }, "decision listener: a question without the proxy's decision.secret; refused (403)");
      throw new GatewayError('proxy_unauthenticated');
    }
    const original = originalRequest(requestFacts(request, NOBODY), { ...settings, trustedProxies: runtime.config.trustedProxies });
    if (original.kind === 'conflicting') {
      logger.warn({ dialect, header: original.header }, "decision listener: the request carries another proxy's description; refused (400)");
      throw new GatewayError('proxy_description_conflict');
    }
    if (original.kind === 'unusable') {
      logger.error({ dialect, missing: original.missing }, 'decision listener: the proxy did not describe the request; refused (fix the proxy config)');
      throw new GatewayError('proxy_description_incomplete');
    }
    return original.facts;
  }

  function warnBodyless(state: DecisionState | undefined, error: GatewayError, dialect: DecisionProxy): void {
    if (error.code !== 'body_required' || warnedBodyless) return;
    warnedBodyless = true;
    logger.warn(
      { route: state?.entry?.route.name, dialect },
      'decision listener: a route that decides per operation got a request without its body from a caller without every scope of the route; send the body (nginx with njs, Traefik forwardBody, Envoy with_request_body) or set upstream.validates_mirrored_headers where the upstream checks Mcp-Method / Mcp-Name',
    );
  }

  app.route({
    method: methods,
    url: '/*',
    exposeHeadRoute: false,
    handler: async (request, reply) => {
      const startedAt = performance.now();
      const runtime = runtimeOf(request);
      const settings = runtime.config.decision ?? options.settings;
      const dialect = settings.proxy;
      let state: DecisionState | undefined;
      let answer: ErrorResponse;
      try {
        state = createDecisionState(runtime, describedRequest(request, runtime, settings), 'listener');
        options.tracing?.traceDecision(request, state);
        const early = await admit(state);
        if (early) {
          answer = { statusCode: early.status, headers: { ...state.responseHeaders, ...early.headers }, body: '' };
        } else {
          state.body = bodyOf(request);
          await authorize(state);
          answer = { statusCode: 200, headers: allowHeaders(state.upstreamHeaders, dialect), body: '' };
        }
      } catch (error) {
        if (!isGatewayError(error)) throw error;
        state?.trace?.decided(error.code);
        warnBodyless(state, error, dialect);
        options.metrics.refusal(state?.entry?.route.name ?? UNMATCHED_ROUTE, error.code);
        answer = refusalForProxy(refusalResponse(error, state), dialect);
      }
      // The audit line and metric come after the turn: the proxy waiting for the verdict does not wait for them.
      const latencyMs = performance.now() - startedAt;
      const httpMethod = state?.facts.method ?? request.method;
      const { statusCode } = answer;
      afterTurn(() => record(options, logger, dialect, state, runtime, httpMethod, statusCode, latencyMs));
      return reply.code(statusCode).headers(answer.headers).send(answer.body === '' ? undefined : answer.body);
    },
  });
  return app;
}

/** Questions are read as they arrive: the proxy's forwarding headers count only through `trusted_proxies`. */
const NOBODY = compileTrustedProxies([]);

const SECRET_HEADER = DECISION_SECRET_HEADER.toLowerCase();

/** The question carries `decision.secret` (compared in constant time), or none is configured (`unauthenticated`). */
function fromProxy(request: FastifyRequest, secret: Secret | undefined): boolean {
  if (secret === undefined) return true;
  const presented = request.headers[SECRET_HEADER];
  if (typeof presented !== 'string') return false;
  return timingSafeEqual(digest(presented), digest(secret.reveal()));
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** True at most once a minute: a caller hammering the port cannot flood the log. */
function onceAMinute(): () => boolean {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    const now = performance.now();
    if (now - last < 60_000) return false;
    last = now;
    return true;
  };
}

/** One audit line and one metric per decision, like the proxy's; never a token. */
function record(
  options: DecisionServerOptions,
  logger: Logger,
  dialect: DecisionProxy,
  state: DecisionState | undefined,
  runtime: DoorRuntime,
  httpMethod: string,
  status: number,
  latencyMs: number,
): void {
  const route = state?.entry?.route.name ?? UNMATCHED_ROUTE;
  options.metrics.decision(route, dialect, status);
  if (!state?.entry) return;
  logger.info({ ...auditRecord({ route, httpMethod, auth: state.auth, message: state.message, status, latencyMs }, runtime.auditPrincipal), dialect }, 'audit');
}
