import { grantsAll } from '../policy/scopes.js';
import type { AuthContext } from './ports.js';
import { GatewayError } from './refusal.js';
import { andThen, type MaybePromise } from '../lib/maybe-promise.js';
import { declaredProtocolVersion, paramHeadersProblem, requiresMirroredHeaders } from '../policy/mcp-headers.js';
import { dependsOnMessage, everyPolicyScope, hasUnplaceableResourceUri } from '../policy/required-scopes.js';
import type { DecisionRuntime, RouteRuntime } from './ports.js';
import { methodAnswer, type EarlyAnswer } from './answers.js';
import { authenticate, checkRouteScopes } from './caller.js';
import type { RequestFacts } from './facts.js';
import { readMessage } from './message.js';
import { messageFromMirroredHeaders } from './mirrored-message.js';
import { checkOperationScopes, resolveUpstreamHeaders } from './operation.js';
import { checkOrigin, preflightAnswer } from './origin.js';
import { matchRoute } from './route.js';
import { checkSession, type SessionBinding } from './session.js';
import type { DecisionState } from './state.js';

/**
 * The decision, in two stages so a front door can refuse before it reads a body. Every step either passes, fills
 * in `state`, or throws the GatewayError that is the refusal (rendered from the response table by
 * `refusalResponse`). The order is the contract: ARCHITECTURE.md "One request, end to end".
 *
 * Stage one, from the request line and headers: route, origin, preflight, token, method, route scopes, rate
 * limit, session. Gives an early answer (preflight, 405) or `undefined` to go on; at once when no step had to
 * wait (a token verified before, no rate limit or session store to ask), else as a promise. Every caller handles
 * a thrown refusal as well as a rejected one.
 */
export function admit(
  runtime: DecisionRuntime,
  facts: RequestFacts,
  state: DecisionState,
  sessions: SessionBinding = 'bound_at_initialize',
): MaybePromise<EarlyAnswer | undefined> {
  const entry = matchRoute(runtime, facts, state);
  checkOrigin(runtime.config.hosts, entry, facts, state);
  const preflight = preflightAnswer(entry, facts);
  if (preflight) return preflight;
  return andThen(authenticate(entry, runtime.config.limits, facts, state), (auth) => admitCaller(entry, auth, facts, state, sessions));
}

/** Stage one once the caller is known: method, route scopes, rate limit, session. */
function admitCaller(
  entry: RouteRuntime,
  auth: AuthContext,
  facts: RequestFacts,
  state: DecisionState,
  sessions: SessionBinding,
): MaybePromise<EarlyAnswer | undefined> {
  const otherMethod = methodAnswer(facts.method);
  if (otherMethod) return otherMethod;
  checkRouteScopes(entry, state);
  const session = () => checkSession(entry, auth, facts, state, sessions)?.then(() => undefined);
  return entry.rateLimiter ? entry.rateLimiter.take(auth).then(session) : session();
}

/**
 * Stage two, with the body (a POST's JSON-RPC message): message and mirrored headers, operation scopes, then the
 * upstream credential. Once it returned (or its promise resolved) `state.upstreamHeaders` is what to set upstream.
 */
export function authorize(facts: RequestFacts, state: DecisionState, body: Buffer | undefined): MaybePromise<void> {
  const { entry, auth } = admitted(state);
  readMessage(entry, facts, state, body);
  checkOperationScopes(entry, state);
  return resolveUpstreamHeaders(entry, auth, facts, state, body);
}

/**
 * Stage two for a front door that never sees the body (nginx auth_request, Traefik forwardAuth, Envoy without
 * `with_request_body`). Where the route's policy depends on the operation, the headers that mirror it
 * (`Mcp-Method`, `Mcp-Name`, MCP 2026-07-28) decide only when the route says its upstream refuses headers that
 * contradict the body (`upstream.validates_mirrored_headers`): otherwise a client could name one tool and run
 * another. Without that, only a caller holding every scope the route's policy names may pass (whatever the body
 * asks, it could ask it); anyone else gets 400: the proxy must send the body.
 */
export async function authorizeWithoutBody(facts: RequestFacts, state: DecisionState): Promise<void> {
  const { entry, auth } = admitted(state);
  const { policy, upstream } = entry.route;
  const paramProblem = paramHeadersProblem(facts.headers);
  if (paramProblem) throw new GatewayError('header_mismatch', { reason: paramProblem });
  if (facts.method === 'POST' && dependsOnMessage(policy)) {
    if (upstream.validatesMirroredHeaders && requiresMirroredHeaders(declaredProtocolVersion(facts.headers))) {
      const message = messageFromMirroredHeaders(facts.headers);
      state.message = message;
      if (hasUnplaceableResourceUri(policy, message)) throw new GatewayError('invalid_params', { reason: 'unplaceable_resource_uri' });
    } else if (!grantsAll(everyPolicyScope(policy), state.scopes)) {
      throw new GatewayError('body_required', { reason: 'operation_policy_without_body' });
    }
  }
  checkOperationScopes(entry, state);
  await resolveUpstreamHeaders(entry, auth, facts, state, undefined);
}

function admitted(state: DecisionState): { entry: RouteRuntime; auth: NonNullable<DecisionState['auth']> } {
  const { entry, auth } = state;
  if (!entry || !auth) throw new Error('authorize ran before admit accepted the caller');
  return { entry, auth };
}
