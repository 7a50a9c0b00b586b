import { requiredScopes } from '../../policy/required-scopes.js';
import { grantsAll } from '../../policy/scopes.js';
import { GatewayError } from '../refusal.js';
import { matchedEntry, type DecisionState } from '../state.js';

/** Every scope the operation needs (route, method, then the tool, resource or prompt it names) → else 403. */
export function checkOperationScopes(state: DecisionState): void {
  const required = requiredScopes(matchedEntry(state).route.policy, state.message);
  if (!grantsAll(required, state.scopes)) {
    throw new GatewayError('insufficient_scope', { requiredScopes: required });
  }
}
