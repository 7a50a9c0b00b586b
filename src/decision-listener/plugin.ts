import { METHODS, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { requestFacts } from '../request-facts.js';
import { admit, authorize, authorizeWithoutBody } from '../decision/pipeline.js';
import { refusalResponse } from '../decision/refusal.js';
import { createDecisionState, type DecisionState } from '../decision/state.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { afterTurn } from '../observability/after-turn.js';
import { auditRecord } from '../observability/audit.js';
import { UNMATCHED_ROUTE, type GatewayMetrics } from '../observability/metrics.js';
import type { Runtime } from '../runtime.js';
import { originalRequest, type Dialect } from './original-request.js';
import { allowHeaders, refusalForProxy } from './verdict.js';
import { lazyRequestLogger } from '../observability/request-logger.js';

export interface DecisionServerOptions {
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  /** Envoy's `path_prefix`, from `decision.path_prefix`. */
  readonly pathPrefix: string;
  /** The largest body Envoy may send with the request (`with_request_body`); fixed at start like the proxy's. */
  readonly maxBodyBytes: number;
  /** Pins every request of `app` to the runtime current when it arrived (reloads swap it); returns the lookup. */
  readonly pinRuntimes: (app: FastifyInstance) => (request: FastifyRequest) => Runtime;
  /** True while shutting down: new decisions get 503 so the proxy retries elsewhere. */
  readonly draining: () => boolean;
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
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  const runtimeOf = options.pinRuntimes(app);

  let warnedBodyless = false;
  app.route({
    method: app.supportedMethods.filter((method) => method !== 'CONNECT'),
    url: '/*',
    exposeHeadRoute: false,
    handler: async (request, reply) => {
      const startedAt = performance.now();
      const original = originalRequest(requestFacts(request), options.pathPrefix);
      if (original.kind === 'unusable') {
        logger.error({ dialect: original.dialect, missing: original.missing }, 'decision listener: the proxy did not describe the request; refused (fix the proxy config)');
        return reply.code(500).type('application/json').send({ error: 'decision_request_incomplete' });
      }
      const { dialect, facts } = original;
      const runtime = runtimeOf(request);
      const state = createDecisionState(runtime.config.limits.maxBodyBytes);
      let status: number;
      let headers: Record<string, string>;
      let body: string | undefined;
      try {
        if (options.draining()) throw new GatewayError('draining');
        const early = await admit(runtime, facts, state, 'claim_on_first_use');
        if (early) {
          [status, headers] = [early.status, { ...state.responseHeaders, ...early.headers }];
        } else {
          const received = bodyOf(request);
          if (received !== undefined && facts.method === 'POST') await authorize(facts, state, received);
          else await authorizeWithoutBody(facts, state);
          [status, headers] = [200, allowHeaders(state, dialect)];
        }
      } catch (error) {
        if (!isGatewayError(error)) throw error;
        if (error.code === 'body_required' && !warnedBodyless) {
          warnedBodyless = true;
          logger.warn(
            { route: state.entry?.route.name, dialect },
            'decision listener: a route that decides per operation got a request without its body; send the body (Envoy with_request_body) or clients must speak MCP 2026-07-28',
          );
        }
        options.metrics.refusal(state.entry?.route.name ?? UNMATCHED_ROUTE, error.code);
        const refusal = refusalForProxy(refusalResponse(error, state), dialect);
        [status, headers, body] = [refusal.statusCode, { ...refusal.headers }, refusal.body];
      }
      // The audit line and metric come after the turn: the proxy waiting for the verdict does not wait for them.
      const latencyMs = performance.now() - startedAt;
      afterTurn(() => record(options, logger, dialect, state, runtime, facts.method, status, latencyMs));
      return reply.code(status).headers(headers).send(body);
    },
  });
  return app;
}

/** One audit line and one metric per decision, like the proxy's; never a token. */
function record(options: DecisionServerOptions, logger: Logger, dialect: Dialect, state: DecisionState, runtime: Runtime, httpMethod: string, status: number, latencyMs: number): void {
  const route = state.entry?.route.name ?? UNMATCHED_ROUTE;
  options.metrics.decision(route, dialect, status);
  if (!state.entry) return;
  logger.info({ ...auditRecord({ route, httpMethod, auth: state.auth, message: state.message, status, latencyMs }, runtime.auditPrincipal), dialect }, 'audit');
}
