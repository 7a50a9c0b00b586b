import { requiredScopes } from '../../policy/required-scopes.js';
import { grantsAll } from '../../policy/scopes.js';
import { GatewayError } from '../refusal.js';
import { matchedEntry, type DecisionState } from '../state.js';

/**
 * The route's own `policy.scopes` need no body: a caller without them is refused before it is read
 * (test/security/slow-requests.test.ts: a refused request's body is never awaited).
 */
export function checkRouteScopes(state: DecisionState): void {
  const { policy } = matchedEntry(state).route;
  if (!grantsAll(policy.scopes, state.scopes)) {
    throw new GatewayError('insufficient_scope', { requiredScopes: requiredScopes(policy, undefined) });
  }
}
