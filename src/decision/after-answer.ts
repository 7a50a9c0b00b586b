import { filterListResponse, filterReplayedListResponse, isFilteredList } from '../policy/list-visibility.js';
import type { JsonRpcMessageFacts } from '../policy/jsonrpc.js';
import { requiredScopes } from '../policy/required-scopes.js';
import { grantsAll } from '../policy/scopes.js';
import { GatewayError } from './refusal.js';
import { readSessionId } from './session-id.js';
import { admitted, type DecisionState } from './state.js';

/**
 * The rules that apply once the upstream answered (the proxy door sees answers; the decision listener never does).
 * The door carries the bytes; what they may be, and what the gateway records of them, is decided here.
 */

/** The upstream's answer, as far as these rules need it. */
export interface UpstreamAnswer {
  readonly status: number;
  readonly sessionIdHeader: string | string[] | undefined;
}

/**
 * A 401 or 403 of the upstream is never relayed: its challenge would steer the client to the upstream's
 * authorization server (RFC 9728 §7.3). A per-user grant the upstream refused (401) is dropped first, so the next
 * request asks for consent again. `undefined` for any other status.
 */
export function upstreamRefusal(state: DecisionState, status: number): Promise<GatewayError> | undefined {
  if (status !== 401 && status !== 403) return undefined;
  const { entry, auth } = admitted(state);
  const refusal = new GatewayError('upstream_rejected', { reason: `upstream_status_${status}` });
  const dropGrant = status === 401 ? entry.credentials.upstreamRejected?.(auth, state.upstreamHeaders) : undefined;
  return (dropGrant ?? Promise.resolve()).then(() => refusal);
}

/**
 * What the decision records once the upstream answered, before the client sees the answer (so its next request
 * finds the binding): a session id issued on initialize is bound to the caller; a confirmed DELETE ends the
 * binding. False when a binding could not be stored (the client will have to re-initialize). `true` at once when
 * there is nothing to record (most answers): no promise to wait for.
 */
export function recordAnswer(state: DecisionState, answer: UpstreamAnswer): true | Promise<boolean> {
  const { entry, auth } = state;
  const httpMethod = state.facts.method;
  if (!entry?.route.sessions.bind || !auth || answer.status < 200 || answer.status >= 300) return true;
  if (httpMethod === 'DELETE' && state.sessionId !== undefined) return entry.sessions.release(state.sessionId).then(() => true);
  if (httpMethod !== 'POST' || state.sessionId !== undefined || state.message?.method !== 'initialize') return true;
  const issued = readSessionId(answer.sessionIdHeader);
  return issued.kind !== 'valid' || entry.sessions.bind(issued.id, auth);
}

/**
 * One JSON-RPC message of an answer, rewritten, or `undefined` when it must not reach the client at all (a
 * message the rewrite cannot place is withheld, never passed on).
 */
export type MessageRewrite = (message: unknown) => unknown;

/**
 * With `policy.hide_unauthorized`, the rewrite of the answer: entries are kept when the caller's scopes (implies
 * applied) cover the operation they stand for — the same requiredScopes/grantsAll check a tools/call of that entry
 * gets. A POST list request's response is matched by id; a GET stream (resumption replays responses) is filtered
 * by shape. `undefined` when nothing is to be filtered.
 */
export function listRewrite(state: DecisionState): MessageRewrite | undefined {
  const { policy } = admitted(state).entry.route;
  if (!policy.hideUnauthorized) return undefined;
  const allowed = (operation: JsonRpcMessageFacts) => grantsAll(requiredScopes(policy, operation), state.scopes);
  if (state.facts.method === 'GET') return (message) => filterReplayedListResponse(message, allowed);
  const method = state.message?.method;
  if (method === undefined || !isFilteredList(method)) return undefined;
  // A list method sent as a notification (no id) is filtered too: an upstream may answer it all the same.
  const id = state.message?.id;
  return (message) => filterListResponse(message, { method, id }, allowed);
}

/**
 * The upstream answered with headers: a standalone GET that did not become an event stream gives its stream slot
 * back now (a POST's request slot is held until its answer ends, an event stream's until it closes).
 */
export function answerStarted(state: DecisionState, eventStream: boolean): void {
  if (!eventStream && state.facts.method === 'GET') state.releaseSlot?.();
}
