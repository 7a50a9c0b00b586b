import { isGatewayError } from '../../src/decision/refusal.js';
import type { MaybePromise } from '../../src/lib/maybe-promise.js';

/**
 * How a verification ended, as a comparable string: `accepted`, the GatewayError code (with `:reason` when asked),
 * or `not a GatewayError` — so a table of cases can assert outcomes with one `toBe`. A verdict given at once (a
 * cached token) is accepted; a refusal always comes as a rejection.
 */
export async function outcome(verdict: MaybePromise<unknown>, options: { withReason?: boolean } = {}): Promise<string> {
  try {
    await verdict;
    return 'accepted';
  } catch (error) {
    if (!isGatewayError(error)) return 'not a GatewayError';
    return options.withReason ? `${error.code}:${error.reason ?? ''}` : error.code;
  }
}
