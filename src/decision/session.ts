import type { AuthContext, BindingState } from './ports.js';
import { GatewayError } from './refusal.js';
import type { RouteRuntime } from './ports.js';
import { readSessionId } from './session-id.js';
import type { RequestFacts } from './facts.js';
import type { DecisionState } from './state.js';

/**
 * Step 6, checklist G1–G5, G8: a session id must be well-formed (else 400), and with `sessions.bind` bound to this
 * principal (else 404, or 503 when the store cannot say). Runs after authentication (a session never
 * authenticates) and before the body is read or anything reaches the upstream. A promise only when the store is
 * asked; `undefined` when there is nothing to wait for.
 */
export function checkSession(
  entry: RouteRuntime,
  auth: AuthContext,
  facts: RequestFacts,
  state: DecisionState,
  sessions: SessionBinding,
): Promise<void> | undefined {
  const header = readSessionId(facts.headers['mcp-session-id']);
  if (header.kind === 'invalid') throw new GatewayError('invalid_session_id', { reason: 'malformed_session_id' });
  if (header.kind === 'absent') return undefined;
  if (!entry.route.sessions.bind) {
    state.sessionId = header.id;
    return undefined;
  }
  return checkBinding(entry.sessions, header.id, auth, sessions).then(() => {
    state.sessionId = header.id;
  });
}

/** The session's binding in the store (`sessions.bind`): refused unless it is this caller's. */
async function checkBinding(bindings: RouteRuntime['sessions'], id: string, auth: AuthContext, sessions: SessionBinding): Promise<void> {
  let binding = await bindings.check(id, auth);
  if (binding === 'unknown' && sessions === 'claim_on_first_use') binding = await bindings.claim(id, auth);
  const refused = bindingDecision(binding);
  if (refused) throw refused;
}

/**
 * How a front door binds sessions: the proxy sees the upstream's initialize answer and binds the id it issues
 * (`bound_at_initialize`; an unbound id is refused). The decision listener never sees answers, so an unbound id is
 * claimed by the first caller presenting it (`claim_on_first_use`), and held to that caller from then on.
 */
export type SessionBinding = 'bound_at_initialize' | 'claim_on_first_use';

/** The upstream's answer, as far as session bookkeeping needs it. */
export interface UpstreamAnswer {
  readonly status: number;
  readonly sessionIdHeader: string | string[] | undefined;
}

/**
 * What the decision records once the upstream answered, before the client sees the answer (so its next request
 * finds the binding): a session id issued on initialize is bound to the caller; a confirmed DELETE ends the
 * binding. False when a binding could not be stored (the client will have to re-initialize). `true` at once when
 * there is nothing to record (most answers): no promise to wait for.
 */
export function recordAnswer(httpMethod: string, state: DecisionState, answer: UpstreamAnswer): true | Promise<boolean> {
  const { entry, auth } = state;
  if (!entry?.route.sessions.bind || !auth || answer.status < 200 || answer.status >= 300) return true;
  if (httpMethod === 'DELETE' && state.sessionId !== undefined) return entry.sessions.release(state.sessionId).then(() => true);
  if (httpMethod !== 'POST' || state.sessionId !== undefined || state.message?.method !== 'initialize') return true;
  const issued = readSessionId(answer.sessionIdHeader);
  return issued.kind !== 'valid' || entry.sessions.bind(issued.id, auth);
}

/**
 * The gateway's answer to a request carrying a session id (fail closed): only the owner passes. A foreign and an
 * unknown session read the same (404, as MCP servers answer expired sessions; clients then re-initialize), so the
 * answer is no oracle of other users' sessions, and a lost binding cannot be claimed by whoever presents the id
 * first. A store that cannot answer is a 503: the session is not declared dead, and nobody else gets in.
 */
export function bindingDecision(state: BindingState): GatewayError | undefined {
  switch (state) {
    case 'owned':
      return undefined;
    case 'foreign':
      return new GatewayError('session_not_found', { reason: 'session_bound_to_other_principal' });
    case 'unknown':
      return new GatewayError('session_not_found', { reason: 'session_not_bound' });
    case 'unavailable':
      return new GatewayError('auth_unavailable', { reason: 'session_store_unavailable' });
  }
}
