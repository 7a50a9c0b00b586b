import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../../observability/health.js';

export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

/** `/healthz` (the process answers) and `/readyz` (config loaded, verifiers warm, not draining). */
export function registerHealthRoutes(app: FastifyInstance, readinessNow: () => Readiness): void {
  app.get('/healthz', (_request, reply) => reply.send({ status: 'ok' }));
  app.get('/readyz', (_request, reply) => {
    const state = readinessNow();
    return reply.code(state.ready ? 200 : 503).send(state.body);
  });
}
