import { andThen, type MaybePromise } from '../../lib/maybe-promise.js';
import { singleHeader } from '../facts.js';
import { admitted, callerToken, type DecisionState } from '../state.js';

/**
 * The headers the gateway sets upstream for this caller: the route's upstream credential (never the caller's token)
 * and, with `upstream.identity`, a signed identity assertion. 502 when no credential can be had; a URL elicitation
 * (elicitation_required) when a user_oauth route has no grant for the caller yet. At once for a static credential
 * without an identity assertion, else as a promise.
 */
export function resolveUpstreamHeaders(state: DecisionState): MaybePromise<void> {
  const { entry, auth } = admitted(state);
  const { facts } = state;
  // A per-user grant (user_oauth) that is missing asks for consent in the form the request's revision takes.
  const credential = entry.credentials.headersFor(auth, callerToken(state), {
    httpMethod: facts.method,
    protocolVersion: singleHeader(facts.headers, 'mcp-protocol-version'),
    message: state.message,
    body: state.body,
  });
  const { identity } = entry;
  return andThen(credential, (headers) => {
    if (!identity) {
      state.upstreamHeaders = headers;
      return undefined;
    }
    return identity.assert(auth, state.scopes).then((assertion) => {
      state.upstreamHeaders = { ...headers, [identity.header]: assertion };
    });
  });
}
