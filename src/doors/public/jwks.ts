import type { FastifyInstance } from 'fastify';
import type { JWK } from 'jose';
import { errorResponse, GatewayError, PUBLIC_DOCUMENT_CORS, publicDocumentPreflightHeaders } from '../../decision/index.js';

/** No document at this path (the response table's not_found row). */
const NOT_FOUND = errorResponse(new GatewayError('not_found'), undefined);

export const JWKS_PATH = '/.well-known/jwks.json';
const JWKS_MAX_AGE_SECONDS = 300;

/**
 * Publishes the public key of identity assertions, unauthenticated, from the current config (a reload with a new
 * signing_key is served at once). 404 when no route asserts identity and no signing_key is configured.
 */
export function registerJwksRoute(app: FastifyInstance, currentKey: () => JWK | undefined): void {
  app.route({
    method: ['GET', 'HEAD'],
    url: JWKS_PATH,
    exposeHeadRoute: false,
    handler: async (_request, reply) => {
      const key = currentKey();
      void reply.headers(PUBLIC_DOCUMENT_CORS);
      if (!key) return reply.code(NOT_FOUND.statusCode).headers(NOT_FOUND.headers).send(NOT_FOUND.body);
      return reply
        .header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`)
        .type('application/json')
        .send({ keys: [key] });
    },
  });
  app.route({
    method: 'OPTIONS',
    url: JWKS_PATH,
    handler: async (request, reply) =>
      reply.code(204).headers(publicDocumentPreflightHeaders(request.headers['access-control-request-headers'])).send(),
  });
}
