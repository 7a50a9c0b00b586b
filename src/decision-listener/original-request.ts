import type { HeaderMap, RequestFacts } from '../decision/facts.js';
import { singleHeader } from '../decision/facts.js';

/** Which proxy asks, told apart by how it describes the request it holds. */
export type Dialect = 'nginx' | 'traefik' | 'envoy';

export type OriginalRequest =
  | { readonly kind: 'request'; readonly dialect: Dialect; readonly facts: RequestFacts }
  /** The proxy described the request incompletely: a configuration error on its side, never decided. */
  | { readonly kind: 'unusable'; readonly dialect: Dialect; readonly missing: string };

/**
 * The request a proxy is asking about, from how it asks:
 * - nginx `auth_request`: `X-Original-URI` and `X-Original-Method` (the example config sets both);
 * - Traefik `forwardAuth`: `X-Forwarded-Uri`, `X-Forwarded-Method`, `X-Forwarded-Host`;
 * - Envoy `ext_authz` (HTTP service): the request itself, its path under `path_prefix`, the body when Envoy is
 *   configured `with_request_body`.
 * The client's own headers come along in every case. The Host decided on is `X-Forwarded-Host` when the proxy sets
 * it, and the client address the proxy's `X-Real-IP`, else the last `X-Forwarded-For` hop (the address that
 * connected to the proxy). These headers are trusted: the decision listener must be reachable by the proxy only.
 */
export function originalRequest(received: RequestFacts, pathPrefix: string): OriginalRequest {
  const { headers } = received;
  const nginxUri = singleHeader(headers, 'x-original-uri');
  if (nginxUri !== undefined) return described('nginx', received, nginxUri, singleHeader(headers, 'x-original-method'), 'X-Original-Method');
  const traefikUri = singleHeader(headers, 'x-forwarded-uri');
  if (traefikUri !== undefined) return described('traefik', received, traefikUri, singleHeader(headers, 'x-forwarded-method'), 'X-Forwarded-Method');
  if (!received.url.startsWith(`${pathPrefix}/`)) return { kind: 'unusable', dialect: 'envoy', missing: `a path under path_prefix "${pathPrefix}"` };
  return { kind: 'request', dialect: 'envoy', facts: { ...received, url: received.url.slice(pathPrefix.length), headers: withHost(headers), clientAddress: clientAddress(received) } };
}

function described(dialect: Dialect, received: RequestFacts, url: string, method: string | undefined, methodHeader: string): OriginalRequest {
  // Without the original method a POST would be decided as whatever method the proxy used to ask: never guess.
  if (method === undefined) return { kind: 'unusable', dialect, missing: methodHeader };
  if (!url.startsWith('/')) return { kind: 'unusable', dialect, missing: `an origin-form URI in the ${dialect === 'nginx' ? 'X-Original-URI' : 'X-Forwarded-Uri'} header` };
  return { kind: 'request', dialect, facts: { ...received, method: method.toUpperCase(), url, headers: withHost(received.headers), clientAddress: clientAddress(received) } };
}

/** The Host the client used: `X-Forwarded-Host` when the proxy passes it on, else the Host it sent here. */
function withHost(headers: HeaderMap): HeaderMap {
  const forwardedHost = singleHeader(headers, 'x-forwarded-host');
  return forwardedHost === undefined ? headers : { ...headers, host: forwardedHost };
}

function clientAddress(received: RequestFacts): string | undefined {
  const realIp = singleHeader(received.headers, 'x-real-ip');
  if (realIp !== undefined) return realIp.trim();
  const forwardedFor = singleHeader(received.headers, 'x-forwarded-for');
  const lastHop = forwardedFor?.split(',').at(-1)?.trim();
  return lastHop || received.clientAddress;
}
