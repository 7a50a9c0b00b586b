import type { FastifyRequest } from 'fastify';
import type { RequestFacts } from './decision/facts.js';

/** A request's decision facts, straight from the framework's request (either front door): no copying of headers. */
export function requestFacts(request: FastifyRequest): RequestFacts {
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    rawHeaders: request.raw.rawHeaders,
    clientAddress: request.ip,
    connection: request.raw.socket,
  };
}
