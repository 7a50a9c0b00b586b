import { grantsAll } from '../../policy/scopes.js';
import type { JsonRpcMessageFacts } from '../../policy/jsonrpc.js';
import { declaredProtocolVersion, decodeMcpHeaderValue, paramHeadersProblem, requiresMirroredHeaders } from '../../policy/mcp-headers.js';
import { dependsOnMessage, everyPolicyScope, hasUnplaceableResourceUri } from '../../policy/required-scopes.js';
import type { HeaderMap } from '../facts.js';
import { GatewayError } from '../refusal.js';
import { matchedEntry, type DecisionState } from '../state.js';

/**
 * For a door that never sees the body (nginx auth_request, Traefik forwardAuth, Envoy without
 * `with_request_body`). Where the route's policy depends on the operation, the headers that mirror it
 * (`Mcp-Method`, `Mcp-Name`, MCP 2026-07-28) decide only when the route says its upstream refuses headers that
 * contradict the body (`upstream.validates_mirrored_headers`): otherwise a client could name one tool and run
 * another. Without that, only a caller holding every scope the route's policy names may pass (whatever the body
 * asks, it could ask it); anyone else gets 400: the proxy must send the body.
 */
export function readMessageWithoutBody(state: DecisionState): void {
  const { facts } = state;
  const { policy, upstream } = matchedEntry(state).route;
  const paramProblem = paramHeadersProblem(facts.headers);
  if (paramProblem) throw new GatewayError('header_mismatch', { reason: paramProblem });
  if (facts.method !== 'POST' || !dependsOnMessage(policy)) return;
  if (upstream.validatesMirroredHeaders && requiresMirroredHeaders(declaredProtocolVersion(facts.headers))) {
    const message = messageFromMirroredHeaders(facts.headers);
    state.message = message;
    if (hasUnplaceableResourceUri(policy, message)) throw new GatewayError('invalid_params', { reason: 'unplaceable_resource_uri' });
  } else if (!grantsAll(everyPolicyScope(policy), state.scopes)) {
    throw new GatewayError('body_required', { reason: 'operation_policy_without_body' });
  }
}

/** The methods whose target MCP 2026-07-28 mirrors in `Mcp-Name`, and the message field it stands for. */
const NAMED: ReadonlyMap<string, 'toolName' | 'resourceUri' | 'promptName'> = new Map([
  ['tools/call', 'toolName'],
  ['resources/read', 'resourceUri'],
  ['prompts/get', 'promptName'],
]);

/**
 * The operation of a request whose body the decision does not see, read from the headers MCP 2026-07-28 requires
 * to mirror it (`Mcp-Method` on every request, `Mcp-Name` for tools/call, resources/read, prompts/get). A missing
 * or undecodable header → 400 -32020.
 */
export function messageFromMirroredHeaders(headers: HeaderMap): JsonRpcMessageFacts {
  const method = decodeHeader(headers['mcp-method']);
  if (method === undefined) throw new GatewayError('header_mismatch', { reason: 'mcp_method_missing' });
  const field = NAMED.get(method);
  if (field === undefined) return { method, id: undefined };
  const name = decodeHeader(headers['mcp-name']);
  if (name === undefined) throw new GatewayError('header_mismatch', { reason: 'mcp_name_missing' });
  return { method, id: undefined, [field]: name };
}

function decodeHeader(value: string | string[] | undefined): string | undefined {
  return value === undefined ? undefined : decodeMcpHeaderValue(value);
}
