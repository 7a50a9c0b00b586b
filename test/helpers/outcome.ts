import { isGatewayError } from '../../src/errors.js';

/**
 * How a verification ended, as a comparable string: `accepted`, the GatewayError code (with `:reason` when asked),
 * or `not a GatewayError` — so a table of cases can assert outcomes with one `toBe`.
 */
export async function outcome(promise: Promise<unknown>, options: { withReason?: boolean } = {}): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    if (!isGatewayError(error)) return 'not a GatewayError';
    return options.withReason ? `${error.code}:${error.reason ?? ''}` : error.code;
  }
}
