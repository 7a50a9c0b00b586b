import type { DecisionProxy } from '../../config/types.js';
import type { TrustedProxies } from '../../config/trusted-proxies.js';
import { singleHeader, type RequestFacts } from '../../decision/index.js';
import { clientOrigin } from '../shared/forwarded.js';

export type OriginalRequest =
  | { readonly kind: 'request'; readonly facts: RequestFacts }
  /** The proxy described the request incompletely: a configuration error on its side, never decided. */
  | { readonly kind: 'unusable'; readonly missing: string }
  /**
   * The question also carries another proxy's description of a request: a client wrote it (the configured proxy
   * passes client headers on), hoping the listener reads that one. Refused, never decided.
   */
  | { readonly kind: 'conflicting'; readonly header: string };

/** The headers by which a proxy describes the request it holds (Envoy: the question is that request itself). */
const DESCRIPTION_HEADERS: Readonly<Record<DecisionProxy, { readonly uri: string; readonly method: string } | undefined>> = {
  nginx: { uri: 'x-original-uri', method: 'x-original-method' },
  traefik: { uri: 'x-forwarded-uri', method: 'x-forwarded-method' },
  envoy: undefined,
};

export interface ListenerSettings {
  /** `decision.proxy`: whose description is read; every other proxy's is refused. */
  readonly proxy: DecisionProxy;
  /** Envoy's `path_prefix`. */
  readonly pathPrefix: string;
  readonly trustedProxies: TrustedProxies;
}

/**
 * The request the configured proxy asks about, read only from the headers that proxy itself sets (never guessed
 * from whichever description comes first):
 * - nginx `auth_request`: `X-Original-URI` and `X-Original-Method` (config/nginx sets both, overwriting a client's);
 * - Traefik `forwardAuth`: `X-Forwarded-Uri` and `X-Forwarded-Method` (Traefik sets them itself);
 * - Envoy `ext_authz` (HTTP service): the request itself, its path under `path_prefix`, the body when Envoy is
 *   configured `with_request_body`.
 * The client's own headers come along in every case. Its Host and address come from `X-Forwarded-Host` /
 * `X-Forwarded-For` only when the proxy is one of `trusted_proxies` (src/forwarded.ts); else the Host the question
 * carries (nginx and Envoy keep the client's) and the proxy's address.
 * `received` is the question as it arrived: its Host header and its peer's address.
 */
export function originalRequest(received: RequestFacts, settings: ListenerSettings): OriginalRequest {
  const { headers } = received;
  for (const [proxy, description] of Object.entries(DESCRIPTION_HEADERS)) {
    if (proxy === settings.proxy || description === undefined) continue;
    const present = [description.uri, description.method].find((name) => headers[name] !== undefined);
    if (present !== undefined) return { kind: 'conflicting', header: present };
  }
  const origin = clientOrigin(received.clientAddress, headers, settings.trustedProxies);
  const description = DESCRIPTION_HEADERS[settings.proxy];
  if (description === undefined) {
    const { pathPrefix } = settings;
    if (!received.url.startsWith(`${pathPrefix}/`)) return { kind: 'unusable', missing: `a path under path_prefix "${pathPrefix}"` };
    return { kind: 'request', facts: { ...received, ...origin, url: received.url.slice(pathPrefix.length) } };
  }
  const url = singleHeader(headers, description.uri);
  const method = singleHeader(headers, description.method);
  if (url === undefined || !url.startsWith('/')) return { kind: 'unusable', missing: `an origin-form URI in the ${description.uri} header` };
  // Without the original method a POST would be decided as whatever method the proxy used to ask: never guess.
  if (method === undefined) return { kind: 'unusable', missing: `the ${description.method} header` };
  return { kind: 'request', facts: { ...received, ...origin, method: method.toUpperCase(), url } };
}
