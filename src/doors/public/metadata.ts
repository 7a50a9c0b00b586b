import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CompiledConfig } from '../../config/types.js';
import { errorResponse, GatewayError, PUBLIC_DOCUMENT_CORS, publicDocumentPreflightHeaders } from '../../decision/index.js';
import { METADATA_MAX_AGE_SECONDS, protectedResourceMetadata } from './metadata-document.js';

/** No document at this path (the response table's not_found row). */
const NOT_FOUND = errorResponse(new GatewayError('not_found'), undefined);

export const METADATA_ROOT = '/.well-known/oauth-protected-resource';

/**
 * Serves RFC 9728 documents without authentication, for every route (path shape A) and at the root for the
 * single or default route (shape B). Lookups go through the current config so a reload adds and removes them.
 */
export function registerMetadataRoutes(app: FastifyInstance, currentConfig: () => CompiledConfig): void {
  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    const route = currentConfig().routesByMetadataPath.get(path);
    void reply.headers(PUBLIC_DOCUMENT_CORS);
    if (!route) {
      return reply.code(NOT_FOUND.statusCode).headers(NOT_FOUND.headers).send(NOT_FOUND.body);
    }
    return reply
      .header('cache-control', `public, max-age=${METADATA_MAX_AGE_SECONDS}`)
      .type('application/json')
      .send(protectedResourceMetadata(route));
  };
  for (const url of [METADATA_ROOT, `${METADATA_ROOT}/*`]) {
    app.route({ method: ['GET', 'HEAD'], url, exposeHeadRoute: false, handler: serve });
    app.route({
      method: 'OPTIONS',
      url,
      handler: async (request, reply) =>
        reply.code(204).headers(publicDocumentPreflightHeaders(request.headers['access-control-request-headers'])).send(),
    });
  }
}
