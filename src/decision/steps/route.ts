import { pathOf } from '../facts.js';
import { GatewayError } from '../refusal.js';
import type { DecisionState } from '../state.js';

/** The route table, by exact path (nothing derived from Host or X-Forwarded-*). Unknown → 404. */
export function matchRoute(state: DecisionState): void {
  const entry = state.runtime.routes.get(pathOf(state.facts.url));
  if (!entry) throw new GatewayError('not_found');
  state.entry = entry;
}
