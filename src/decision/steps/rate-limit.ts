import { admitted, type DecisionState } from '../state.js';

/** The route's `rate_limit` for this caller (429 + Retry-After beyond it); nothing to wait for without one. */
export function takeRateLimit(state: DecisionState): Promise<void> | undefined {
  const { entry, auth } = admitted(state);
  return entry.rateLimiter?.take(auth);
}
