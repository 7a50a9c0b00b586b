import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify';
import { GatewayError } from '../../decision/index.js';

/**
 * Both doors keep a request's body as the exact bytes received, whatever its media type: what the decision
 * evaluates is what the upstream gets (no parser differential). `limitOf` is the request's own limit (a reload may
 * lower `limits.max_body_bytes`), checked once the body is complete; `bodyLimit`, fixed at start, bounds what is
 * buffered meanwhile.
 */
export function keepRawBodies(app: FastifyInstance, bodyLimit: number, limitOf: (request: FastifyRequest) => number | undefined = () => undefined): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    const limit = limitOf(request);
    done(limit !== undefined && body.length > limit ? new GatewayError('payload_too_large') : null, body);
  });
}

/**
 * Every method Node parses reaches the door's hooks, so none is refused before authentication
 * (test/security/methods.test.ts). CONNECT never becomes a request: Node hands it to the server's 'connect' event,
 * which the gateway leaves unset. Returns the methods to route.
 */
export function acceptEveryMethod(app: FastifyInstance): HTTPMethods[] {
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  return app.supportedMethods.filter((method) => method !== 'CONNECT');
}
