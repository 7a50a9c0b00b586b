import { errorResponse, type ErrorResponse } from '../auth/responses.js';
import type { GatewayError } from '../errors.js';
import type { DecisionState } from './state.js';

/**
 * The answer to a refusal, exactly as the response table says (src/auth/responses.ts), with the challenge of the
 * route it happened on and the CORS headers the request earned before it was refused.
 */
export function refusalResponse(error: GatewayError, state: DecisionState | null | undefined): ErrorResponse {
  const entry = state?.entry;
  const challenge = entry && { metadataUrl: entry.route.metadataUrl, challengeScopes: entry.challengeScopes };
  const response = errorResponse(error, challenge, state?.jsonRpcId ?? null);
  const cors = state?.responseHeaders;
  return cors && Object.keys(cors).length > 0 ? { ...response, headers: { ...cors, ...response.headers } } : response;
}
