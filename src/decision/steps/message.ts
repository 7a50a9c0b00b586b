import { inspectJsonRpcBody } from '../../policy/jsonrpc.js';
import { mirroredHeadersProblem, paramHeadersProblem } from '../../policy/mcp-headers.js';
import { hasUnplaceableResourceUri } from '../../policy/required-scopes.js';
import { singleHeader } from '../facts.js';
import { GatewayError } from '../refusal.js';
import { matchedEntry, type DecisionState } from '../state.js';

const EMPTY = Buffer.alloc(0);

/**
 * The POST body is one JSON-RPC message (else 400 -32600), its mirrored headers say what the body says (else 400
 * -32020), and a resource it names can be placed by the route's resource policies (else 400 -32602). GET and
 * DELETE carry no message: only the route's scopes and the Mcp-Param-* header rules apply to them.
 */
export function readMessage(state: DecisionState): void {
  const { facts } = state;
  if (facts.method !== 'POST') {
    // No message to mirror, but the upstream still sees any Mcp-Param-* headers: the same rules for them.
    const problem = paramHeadersProblem(facts.headers);
    if (problem) throw new GatewayError('header_mismatch', { reason: problem });
    return;
  }
  const inspection = inspectJsonRpcBody(state.body ?? EMPTY, singleHeader(facts.headers, 'content-type'));
  if (inspection.kind === 'invalid') {
    state.jsonRpcId = inspection.id;
    throw new GatewayError('invalid_jsonrpc', { reason: inspection.reason });
  }
  const { message } = inspection;
  state.jsonRpcId = message.id ?? null;
  state.message = message;
  const mismatch = mirroredHeadersProblem(facts.headers, message);
  if (mismatch) throw new GatewayError('header_mismatch', { reason: mismatch });
  if (hasUnplaceableResourceUri(matchedEntry(state).route.policy, message)) {
    throw new GatewayError('invalid_params', { reason: 'unplaceable_resource_uri' });
  }
}
