import { corsDecision } from '../cors.js';
import { rebindingRefused } from '../dns-rebinding.js';
import { singleHeader } from '../facts.js';
import { GatewayError } from '../refusal.js';
import { matchedEntry, type DecisionState } from '../state.js';

/**
 * Who may talk to the route at all, before any token is looked at. DNS rebinding protection (Host, and Origin on
 * loopback gateways) → 403 host_forbidden; the route's CORS policy → 403 origin_forbidden, else the CORS headers
 * every answer to this request carries.
 */
export function checkOrigin(state: DecisionState): void {
  const { route } = matchedEntry(state);
  const origin = singleHeader(state.facts.headers, 'origin');
  if (rebindingRefused(state.runtime.config.hosts, state.facts.host, origin, route.cors.allowedOrigins)) {
    throw new GatewayError('host_forbidden');
  }
  const cors = corsDecision(route.cors, origin);
  if (!cors.allowed) throw new GatewayError('origin_forbidden');
  if (origin !== undefined) state.responseHeaders = cors.headers;
}
