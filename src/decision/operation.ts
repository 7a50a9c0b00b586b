import { grantsAll } from '../policy/scopes.js';
import type { AuthContext } from './ports.js';
import { GatewayError } from './refusal.js';
import { andThen, type MaybePromise } from '../lib/maybe-promise.js';
import { requiredScopes } from '../policy/required-scopes.js';
import type { RouteRuntime } from './ports.js';
import { singleHeader, type RequestFacts } from './facts.js';
import { callerToken, type DecisionState } from './state.js';

/** Step 5b: every scope the operation needs (route, method, then the tool, resource or prompt it names) → else 403. */
export function checkOperationScopes(entry: RouteRuntime, state: DecisionState): void {
  const required = requiredScopes(entry.route.policy, state.message);
  if (!grantsAll(required, state.scopes)) {
    throw new GatewayError('insufficient_scope', { requiredScopes: required });
  }
}

/**
 * Step 7: the headers the gateway sets upstream for this caller: the route's upstream credential (never the
 * caller's token) and, with `upstream.identity`, a signed identity assertion. 502 when no credential can be had;
 * a URL elicitation (elicitation_required) when a user_oauth route has no grant for the caller yet. At once for a
 * static credential without an identity assertion, else as a promise.
 */
export function resolveUpstreamHeaders(
  entry: RouteRuntime,
  auth: AuthContext,
  facts: RequestFacts,
  state: DecisionState,
  body: Buffer | undefined,
): MaybePromise<void> {
  // A per-user grant (user_oauth) that is missing asks for consent in the form the request's revision takes.
  const credential = entry.credentials.headersFor(auth, callerToken(state), {
    httpMethod: facts.method,
    protocolVersion: singleHeader(facts.headers, 'mcp-protocol-version'),
    message: state.message,
    body,
  });
  const { identity } = entry;
  return andThen(credential, (headers) => {
    if (!identity) {
      state.upstreamHeaders = headers;
      return undefined;
    }
    return identity.assert(auth, state.scopes).then((assertion) => {
      state.upstreamHeaders = { ...headers, [identity.header]: assertion };
    });
  });
}
