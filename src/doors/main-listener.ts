import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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

/** fastify's default, kept from before the server was made here. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

const REQUEST_ID = /^[\w.-]{1,64}$/;

/** A request's id: the client's `X-Request-Id` when it is a plain token of up to 64 characters, else a new UUID. */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const given = headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * A door that serves some requests on Node's own request and response, before fastify routes them: `claim`
 * answers true when it took the request. Set once the door is built (gateway/build.ts).
 */
export interface FrontDoor {
  claim: ((request: IncomingMessage, response: ServerResponse) => boolean) | undefined;
}

/** Marks a request the server already offered to the front door, so fastify's hook does not ask a second time. */
const OFFERED = Symbol('offered to the front door');
type OfferedRequest = IncomingMessage & { [OFFERED]?: true };

/**
 * The main listener's app, before any route: request ids, the request-receiving timeouts, and every error a
 * handler or the framework raises answered by the response table (sendRefusal). Its server hands each request to
 * `front` first (the proxy door), then to fastify. Never listens by itself.
 */
export function buildMainListener(limits: LimitSettings, logger: Logger, metrics: GatewayMetrics, front: FrontDoor = { claim: undefined }): FastifyInstance {
  const app: FastifyInstance = fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    // The server fastify would make, with the front door before fastify's routing.
    serverFactory: (handler) => {
      // Node checks the timers of `requestTimeout` this often (its default, 30 s, would let a stalled body live 30 s past them).
      const server = createServer({ connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS }, (request: OfferedRequest, response) => {
        if (front.claim?.(request, response) === true) return;
        request[OFFERED] = true;
        handler(request, response);
      });
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      // The whole request (headers and body) must arrive within this; the answer, SSE streams included, is not
      // limited by it (Node stops the timer once the request is complete): test/security/slow-requests.test.ts.
      server.requestTimeout = limits.bodyTimeout;
      server.headersTimeout = limits.headerTimeout;
      return server;
    },
    loggerInstance: logger,
    // One audit line per decision replaces fastify's two per-request lines: half the gateway's allocations
    // were those lines going through redaction (bench/README.md, profile).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    genReqId: (request) => requestIdOf(request.headers),
    requestIdHeader: false,
    bodyLimit: limits.maxBodyBytes,
    return503OnClosing: true,
    // A path fastify cannot decode never reaches a hook: a generic 400 that does not echo the path.
    frameworkErrors: (_error, request, reply: FastifyReply) => {
      closeIfBodyUnread(request, reply);
      const response = errorResponse(new GatewayError('bad_request', { status: 400 }), undefined);
      void reply.code(response.statusCode).headers(response.headers).send(response.body);
    },
  });
  app.decorateRequest('decision', null);
  // A request that reaches fastify without going through its server (`app.inject`: tests, tools) meets the same
  // front door first; one from the server was offered to it already.
  app.addHook('onRequest', (request, reply, done) => {
    if ((request.raw as OfferedRequest)[OFFERED] !== true && front.claim?.(request.raw, reply.raw) === true) reply.hijack();
    else done();
  });
  app.setErrorHandler((error: FastifyError, request, reply) => sendRefusal(metrics, request, reply, refusalOf(error)));
  return app;
}
