import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { LimitSettings } from '../config/types.js';
import { errorResponse, GatewayError, type DecisionState } from '../decision/index.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { closeIfBodyUnread } from './shared/lifecycle.js';
import { refusalOf, sendRefusal } from './shared/refusal.js';
import { lazyRequestLogger } from './shared/request-logger.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The decision about an MCP request (src/decision/); null on other paths. */
    decision: DecisionState | null;
  }
}

/** How often Node looks for requests past `limits.body_timeout` / `limits.header_timeout`. */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

const REQUEST_ID = /^[\w.-]{1,64}$/;

/**
 * The main listener's app, before any route: request ids, the request-receiving timeouts, and every error a
 * handler or the framework raises answered by the response table (sendRefusal). Never listens by itself.
 */
export function buildMainListener(limits: LimitSettings, logger: Logger, metrics: GatewayMetrics): FastifyInstance {
  const app: FastifyInstance = fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: logger,
    // One audit line per decision replaces fastify's two per-request lines: half the gateway's allocations
    // were those lines going through redaction (bench/README.md, profile).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    bodyLimit: limits.maxBodyBytes,
    // The whole request (headers and body) must arrive within this; the answer, SSE streams included, is not
    // limited by it (Node stops the timer once the request is complete): test/security/slow-requests.test.ts.
    requestTimeout: limits.bodyTimeout,
    // Node checks those timers this often (its default, 30 s, would let a stalled body live 30 s past them).
    http: { connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    return503OnClosing: true,
    // A path fastify cannot decode never reaches a hook: a generic 400 that does not echo the path.
    frameworkErrors: (_error, request, reply: FastifyReply) => {
      closeIfBodyUnread(request, reply);
      const response = errorResponse(new GatewayError('bad_request', { status: 400 }), undefined);
      void reply.code(response.statusCode).headers(response.headers).send(response.body);
    },
  });
  app.decorateRequest('decision', null);
  app.server.headersTimeout = limits.headerTimeout;
  app.setErrorHandler((error: FastifyError, request, reply) => sendRefusal(metrics, request, reply, refusalOf(error)));
  return app;
}
