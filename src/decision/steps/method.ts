import { METHOD_NOT_ALLOWED, OPTIONS_ANSWER, type EarlyAnswer } from '../responses.js';
import type { DecisionState } from '../state.js';

const MCP_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'DELETE']);

/**
 * Which methods exist is told only to an authenticated caller (test/security/methods.test.ts): a plain OPTIONS
 * gets 204 with Allow, any other method the MCP transport does not use 405.
 */
export function answerOtherMethods(state: DecisionState): EarlyAnswer | undefined {
  const { method } = state.facts;
  if (MCP_METHODS.has(method)) return undefined;
  return method === 'OPTIONS' ? OPTIONS_ANSWER : METHOD_NOT_ALLOWED;
}
