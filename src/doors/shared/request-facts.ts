import type { IncomingMessage } from 'node:http';
import type { TrustedProxies } from '../../config/trusted-proxies.js';
import type { RequestFacts } from '../../decision/index.js';
import { clientOrigin } from './forwarded.js';

/** What the facts are read from: fastify's request, or the proxy door's on Node's own. */
export interface FactsSource {
  readonly method: string;
  readonly url: string;
  readonly raw: IncomingMessage;
}

/**
 * A request's decision facts, straight from the door's request (either front door): no copying of headers.
 * Host and client address come from X-Forwarded-* only when the peer is one of `trusted_proxies`.
 */
export function requestFacts(request: FactsSource, trusted: TrustedProxies): RequestFacts {
  const peer = request.raw.socket.remoteAddress;
  const headers = request.raw.headers;
  let host = headers.host;
  let clientAddress = peer;
  if (!trusted.none) ({ host, clientAddress } = clientOrigin(peer, headers, trusted));
  return {
    method: request.method,
    url: request.url,
    headers,
    rawHeaders: request.raw.rawHeaders,
    host,
    clientAddress,
    connection: request.raw.socket,
  };
}
