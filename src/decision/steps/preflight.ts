import { preflightHeaders } from '../cors.js';
import { singleHeader } from '../facts.js';
import { preflightAnswer, type EarlyAnswer } from '../responses.js';
import { matchedEntry, type DecisionState } from '../state.js';

/**
 * A CORS preflight (an OPTIONS with Origin and Access-Control-Request-Method): browsers send it without
 * credentials, so it is answered here, before authentication. Any other request on an MCP path, OPTIONS and HEAD
 * included, authenticates first (test/security/methods.test.ts).
 */
export function answerPreflight(state: DecisionState): EarlyAnswer | undefined {
  const { method, headers } = state.facts;
  if (method !== 'OPTIONS' || headers.origin === undefined || headers['access-control-request-method'] === undefined) return undefined;
  return preflightAnswer(preflightHeaders(matchedEntry(state).route.cors, singleHeader(headers, 'access-control-request-headers')));
}
