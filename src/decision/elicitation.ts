import type { JsonRpcMessageFacts } from '../policy/jsonrpc.js';

/**
 * How a request that needs the user's consent first is answered, by the protocol revision it speaks:
 *
 * - MCP 2025-11-25 answers a request with the JSON-RPC error -32042 `URLElicitationRequiredError` (HTTP 200, so
 *   SDK clients read it as a JSON-RPC error rather than a transport failure); what has no JSON-RPC answer
 *   (a notification, a GET stream, a DELETE) gets the same error with id null and HTTP 403.
 * - MCP 2026-07-28 forbids -32042: `tools/call`, `prompts/get` and `resources/read` get an `InputRequiredResult`
 *   holding an `elicitation/create` URL request (multi round-trip requests), when the client declared URL
 *   elicitation; without that capability, `MissingRequiredClientCapability` (-32021, HTTP 400); every other
 *   request, which may not carry an `InputRequiredResult`, a 403 without a link.
 */
export type ElicitationAnswer =
  | 'url_elicitation_error'
  | 'url_elicitation_refusal'
  | 'input_required'
  | 'missing_capability'
  | 'not_connected';

/** The request facts the answer depends on. */
export interface ElicitationRequest {
  readonly httpMethod: string;
  /** The `MCP-Protocol-Version` header. */
  readonly protocolVersion: string | undefined;
  /** The POST body's message, when there is one. */
  readonly message: JsonRpcMessageFacts | undefined;
  /** The POST body itself: 2026-07-28 requests declare their client capabilities in `params._meta`. */
  readonly body: Buffer | undefined;
}

/** The first revision with multi round-trip requests instead of -32042. */
const MRTR_REVISION = '2026-07-28';
const REVISION_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/** Requests that may be answered with an InputRequiredResult (2026-07-28, basic/patterns/mrtr "Supported Requests"). */
const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);
const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

export function speaksMultiRoundTrip(protocolVersion: string | undefined): boolean {
  return protocolVersion !== undefined && REVISION_PATTERN.test(protocolVersion) && protocolVersion >= MRTR_REVISION;
}

export function elicitationAnswer(request: ElicitationRequest): ElicitationAnswer {
  const { message } = request;
  const answerable = request.httpMethod === 'POST' && message?.method !== undefined && message.id !== undefined;
  if (!speaksMultiRoundTrip(request.protocolVersion)) return answerable ? 'url_elicitation_error' : 'url_elicitation_refusal';
  if (!answerable || !INPUT_REQUIRED_METHODS.has(message.method ?? '')) return 'not_connected';
  return declaresUrlElicitation(request.body) ? 'input_required' : 'missing_capability';
}

/** Whether the answer hands the client a consent link (only those make the gateway issue one). */
export function carriesLink(answer: ElicitationAnswer): boolean {
  return answer === 'url_elicitation_error' || answer === 'url_elicitation_refusal' || answer === 'input_required';
}

function objectAt(value: unknown, key: string): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return undefined;
  const inner = (value as Record<string, unknown>)[key];
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? (inner as Record<string, unknown>) : undefined;
}

/** `params._meta["io.modelcontextprotocol/clientCapabilities"].elicitation.url` is an object. */
function declaresUrlElicitation(body: Buffer | undefined): boolean {
  if (body === undefined) return false;
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  const capabilities = objectAt(objectAt(objectAt(message, 'params'), '_meta'), CLIENT_CAPABILITIES_META);
  return objectAt(objectAt(capabilities, 'elicitation'), 'url') !== undefined;
}
