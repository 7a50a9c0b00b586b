import type { AuthContext, BindingState, SessionBindings } from '../ports.js';
import { GatewayError } from '../refusal.js';
import { readSessionId } from '../session-id.js';
import { admitted, type DecisionState, type Door } from '../state.js';

/**
 * A session id must be well-formed (else 400), and with `sessions.bind` bound to this principal (else 404, or 503
 * when the store cannot say): test/integration/sessions.test.ts. Runs after authentication (a session never
 * authenticates) and before the body is read or anything reaches the upstream. A promise only when the store is
 * asked; `undefined` when there is nothing to wait for.
 */
export function checkSession(state: DecisionState): Promise<void> | undefined {
  const { entry, auth } = admitted(state);
  const header = readSessionId(state.facts.headers['mcp-session-id']);
  if (header.kind === 'invalid') throw new GatewayError('invalid_session_id', { reason: 'malformed_session_id' });
  if (header.kind === 'absent') return undefined;
  if (!entry.route.sessions.bind) {
    state.sessionId = header.id;
    return undefined;
  }
  return checkBinding(entry.sessions, header.id, auth, state.door).then(() => {
    state.sessionId = header.id;
  });
}

/**
 * The session's binding in the store (`sessions.bind`): refused unless it is this caller's. The proxy sees the
 * upstream's initialize answer and binds the id it issues, so an unbound id is refused. The decision listener never
 * sees answers: an unbound id is claimed by the first caller presenting it, and held to that caller from then on.
 */
async function checkBinding(bindings: SessionBindings, id: string, auth: AuthContext, door: Door): Promise<void> {
  let binding = await bindings.check(id, auth);
  if (binding === 'unknown' && door === 'listener') binding = await bindings.claim(id, auth);
  const refused = bindingDecision(binding);
  if (refused) throw refused;
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
