import type { FastifyRequest } from 'fastify';
import type { TrustedProxies } from '../../config/trusted-proxies.js';
import type { RequestFacts } from '../../decision/index.js';
import { clientOrigin } from './forwarded.js';

/**
 * A request's decision facts, straight from the framework's request (either front door): no copying of headers.
 * Host and client address come from X-Forwarded-* only when the peer is one of `trusted_proxies`.
 */
export function requestFacts(request: FastifyRequest, trusted: TrustedProxies): RequestFacts {
  const peer = request.raw.socket.remoteAddress;
  let host = request.headers.host;
  let clientAddress = peer;
  if (!trusted.none) ({ host, clientAddress } = clientOrigin(peer, request.headers, trusted));
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    rawHeaders: request.raw.rawHeaders,
    host,
    clientAddress,
    connection: request.raw.socket,
  };
}
