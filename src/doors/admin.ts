import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Readiness } from '../observability/health.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { registerHealthRoutes } from './public/health.js';
import { lazyRequestLogger } from './shared/request-logger.js';

export const METRICS_PATH = '/metrics';

export interface AdminServerOptions {
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  readonly readinessNow: () => Readiness;
}

/**
 * The admin listener's app: `/metrics`, `/healthz`, `/readyz`, nothing else. It is a separate server (loopback by
 * default) so metrics and internals are never reachable on the public listener. Never listens.
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
