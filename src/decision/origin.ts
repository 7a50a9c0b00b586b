import type { HostPolicy } from '../config/types.js';
import { GatewayError } from './refusal.js';
import { corsDecision, preflightHeaders } from './cors.js';
import { rebindingRefused } from './dns-rebinding.js';
import type { RouteRuntime } from './ports.js';
import { singleHeader, type RequestFacts } from './facts.js';
import type { DecisionState } from './state.js';
import type { EarlyAnswer } from './answers.js';

/**
 * Step 2: who may talk to the route at all, before any token is looked at. DNS rebinding protection (Host, and
 * Origin on loopback gateways) → 403 host_forbidden; the route's CORS policy → 403 origin_forbidden, else the CORS
 * headers every answer to this request carries.
 */
export function checkOrigin(hosts: HostPolicy, entry: RouteRuntime, facts: RequestFacts, state: DecisionState): void {
  const origin = singleHeader(facts.headers, 'origin');
  if (rebindingRefused(hosts, facts.host, origin, entry.route.cors.allowedOrigins)) {
    throw new GatewayError('host_forbidden');
  }
  const cors = corsDecision(entry.route.cors, origin);
  if (!cors.allowed) throw new GatewayError('origin_forbidden');
  if (origin !== undefined) state.responseHeaders = cors.headers;
}

/**
 * A CORS preflight (an OPTIONS with Origin and Access-Control-Request-Method): browsers send it without
 * credentials, so it is answered here, before authentication. Any other request on an MCP path, OPTIONS and HEAD
 * included, authenticates first (checklist K7).
 */
export function preflightAnswer(entry: RouteRuntime, facts: RequestFacts): EarlyAnswer | undefined {
  const preflight =
    facts.method === 'OPTIONS' && facts.headers.origin !== undefined && facts.headers['access-control-request-method'] !== undefined;
  if (!preflight) return undefined;
  return { status: 204, headers: preflightHeaders(entry.route.cors, singleHeader(facts.headers, 'access-control-request-headers')) };
}
