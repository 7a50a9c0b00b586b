import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { errorResponse, type ChallengeContext } from './auth/responses.js';
import type { CacheStore } from './cache/store.js';
import type { CompiledConfig } from './config/types.js';
import { GatewayError, isGatewayError } from './errors.js';
import { registerMetadataRoutes } from './metadata/plugin.js';
import { readiness } from './observability/health.js';
import { registerProxyRoutes } from './proxy/plugin.js';
import { createUpstreamAgent } from './proxy/upstream-agent.js';
import { closeRuntime, createRuntime, type Runtime, type VerifierFactory } from './runtime.js';

export interface ServerDeps {
  readonly logger: Logger;
  readonly cache: CacheStore;
  readonly verifierFor: VerifierFactory;
}

export interface Gateway {
  readonly app: FastifyInstance;
  /** Fetches JWKS etc. so /readyz turns green; never throws. */
  warm(): Promise<void>;
  /** Stops accepting MCP requests (503) and marks /readyz as draining. */
  drain(): void;
  close(): Promise<void>;
}

const HEALTH_PATHS = new Set(['/healthz', '/readyz']);

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

function challengeContext(request: FastifyRequest): ChallengeContext | undefined {
  const entry = request.mcp?.entry;
  return entry && { metadataUrl: entry.route.metadataUrl, challengeScopes: entry.challengeScopes };
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: GatewayError): void {
  const response = errorResponse(error, challengeContext(request), request.mcp?.jsonRpcId ?? null);
  const level = error.code === 'auth_unavailable' || error.code.startsWith('upstream_') ? 'warn' : 'info';
  request.log[level]({ code: error.code, reason: error.reason, route: request.mcp?.entry.route.name }, 'request refused');
  void reply.code(response.statusCode).headers(response.headers).send(response.body);
}

/** Wires the plugins; never listens (tests and main.ts decide where). */
export async function buildServer(config: CompiledConfig, deps: ServerDeps): Promise<Gateway> {
  const runtime: Runtime = createRuntime(config, deps.verifierFor);
  const dispatcher = createUpstreamAgent(config.routes);
  let draining = false;

  const app: FastifyInstance = fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: deps.logger,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    bodyLimit: config.limits.maxBodyBytes,
    // SSE streams are long-lived: never cut a request by a server-side timer.
    requestTimeout: 0,
    return503OnClosing: true,
  });
  app.decorateRequest('mcp', null);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const gatewayError = toGatewayError(error);
    if (gatewayError) {
      sendError(request, reply, gatewayError);
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

  app.addHook('onRequest', (request, _reply, done) => {
    done(draining && !HEALTH_PATHS.has(request.url) ? new GatewayError('draining') : undefined);
  });

  app.get('/healthz', (_request, reply) => reply.send({ status: 'ok' }));
  app.get('/readyz', (_request, reply) => {
    const state = readiness(runtime, deps.cache.status(), draining);
    return reply.code(state.ready ? 200 : 503).send(state.body);
  });
  registerMetadataRoutes(app, () => runtime.config);
  await registerProxyRoutes(app, { current: () => runtime, dispatcher, maxBodyBytes: config.limits.maxBodyBytes, sendError });

  return {
    app,
    warm: async () => {
      await Promise.all([...runtime.routes.values()].map((entry) => entry.verifier.warm()));
    },
    drain: () => {
      draining = true;
    },
    close: async () => {
      await app.close();
      await Promise.all([closeRuntime(runtime), dispatcher.close(), deps.cache.close()]);
    },
  };
}
