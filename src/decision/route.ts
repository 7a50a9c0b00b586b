import { GatewayError } from './refusal.js';
import type { DecisionRuntime, RouteRuntime } from './ports.js';
import { pathOf, type RequestFacts } from './facts.js';
import type { DecisionState } from './state.js';

/** Step 1: the route table, by exact path (nothing derived from Host or X-Forwarded-*). Unknown → 404. */
export function matchRoute(runtime: DecisionRuntime, facts: RequestFacts, state: DecisionState): RouteRuntime {
  const entry = runtime.routes.get(pathOf(facts.url));
  if (!entry) throw new GatewayError('not_found');
  state.entry = entry;
  return entry;
}
