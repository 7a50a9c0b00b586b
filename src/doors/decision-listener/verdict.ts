import type { ErrorResponse } from '../../decision/index.js';
import type { DecisionProxy } from '../../config/types.js';

/**
 * Client headers never to reach the upstream (a DPoP proof is for the gateway alone, RFC 9449 §7); Envoy removes
 * those the verdict names (its HTTP ext_authz contract).
 */
const CLIENT_CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'dpop'] as const;

/**
 * An allowed request's answer headers: what the proxy must set upstream (the route's upstream credential, the
 * identity assertion), never the client's token. For Envoy, also `x-envoy-auth-headers-to-remove` naming the
 * client credential headers the verdict does not replace, so the client's token is dropped even on a route whose
 * upstream needs no credential.
 */
export function allowHeaders(upstreamHeaders: Readonly<Record<string, string>>, dialect: DecisionProxy): Record<string, string> {
  const headers: Record<string, string> = { ...upstreamHeaders };
  if (dialect === 'envoy') {
    const removed = CLIENT_CREDENTIAL_HEADERS.filter((name) => !(name in headers));
    if (removed.length > 0) headers['x-envoy-auth-headers-to-remove'] = removed.join(', ');
  }
  return headers;
}

/** nginx answers a refused subrequest itself and never sees its body: the body travels in this header instead. */
export const NGINX_BODY_HEADER = 'x-mcp-decision-body';

/**
 * A refusal as this proxy needs it: the proxy-mode answer, plus for nginx its body in a header. An answer the proxy
 * mode gives with a 2xx status (a user_oauth URL elicitation is a JSON-RPC error in a 200) would read as "allowed"
 * to every proxy: it goes out as 403 with the same body instead, never as a verdict to forward.
 */
export function refusalForProxy(response: ErrorResponse, dialect: DecisionProxy): ErrorResponse {
  const refused = response.statusCode < 400 ? { ...response, statusCode: 403 } : response;
  if (dialect !== 'nginx') return refused;
  return { ...refused, headers: { ...refused.headers, [NGINX_BODY_HEADER]: refused.body } };
}
