import type { JsonRpcMessageFacts } from '../policy/jsonrpc.js';

/**
 * How a request that needs the user's consent first is answered, so that the link reaches the person whatever the
 * client:
 *
 * - A client that declared URL elicitation gets it in its revision's form: MCP 2025-11-25 declares capabilities in
 *   `initialize` only, whose answer is the JSON-RPC error -32042 `URLElicitationRequiredError` (HTTP 200, so SDK
 *   clients read it as a JSON-RPC error rather than a transport failure); MCP 2026-07-28 declares them on every
 *   request, and `tools/call`, `prompts/get` and `resources/read` get an `InputRequiredResult` holding an
 *   `elicitation/create` URL request (multi round-trip requests; -32042 is gone).
 * - Every other `tools/call` gets a tool result with `isError: true` whose text holds the link: agents show tool
 *   errors to the person, and a 2025-11-25 request inside a session cannot tell what its `initialize` declared.
 * - Every other request with an id gets a JSON-RPC error whose message holds the link (HTTP 200): `initialize`,
 *   `server/discover` and the lists, which clients show when connecting fails.
 * - What has no JSON-RPC answer (a notification, a GET stream, a DELETE) gets HTTP 403: for 2025-11-25 the -32042
 *   error with id null, for 2026-07-28 without a link.
 */
export type ElicitationAnswer =
  | 'url_elicitation_error'
  | 'url_elicitation_refusal'
  | 'input_required'
  | 'tool_error'
  | 'link_error'
  | 'not_connected';

/** The request facts the answer depends on. */
export interface ElicitationRequest {
  readonly httpMethod: string;
  /** The `MCP-Protocol-Version` header. */
  readonly protocolVersion: string | undefined;
  /** The POST body's message, when there is one. */
  readonly message: JsonRpcMessageFacts | undefined;
  /** The POST body itself: where the client declares its capabilities (`initialize`, or 2026-07-28 `params._meta`). */
  readonly body: Buffer | undefined;
}

/** The first revision with multi round-trip requests instead of -32042. */
const MRTR_REVISION = '2026-07-28';
const REVISION_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/** Requests that may be answered with an InputRequiredResult (2026-07-28, basic/patterns/mrtr "Supported Requests"). */
const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);
/** Where a request declares the client's capabilities: 2026-07-28 in every request's `_meta`, before in `initialize`. */
const CLIENT_CAPABILITIES_IN_META = ['params', '_meta', 'io.modelcontextprotocol/clientCapabilities'] as const;
const CLIENT_CAPABILITIES_IN_INITIALIZE = ['params', 'capabilities'] as const;

export function speaksMultiRoundTrip(protocolVersion: string | undefined): boolean {
  return protocolVersion !== undefined && REVISION_PATTERN.test(protocolVersion) && protocolVersion >= MRTR_REVISION;
}

export function elicitationAnswer(request: ElicitationRequest): ElicitationAnswer {
  const { message } = request;
  const multiRoundTrip = speaksMultiRoundTrip(request.protocolVersion);
  const answerable = request.httpMethod === 'POST' && message?.method !== undefined && message.id !== undefined;
  if (!answerable) return multiRoundTrip ? 'not_connected' : 'url_elicitation_refusal';
  const method = message.method ?? '';
  if (multiRoundTrip && INPUT_REQUIRED_METHODS.has(method) && declaresUrlElicitation(request.body, CLIENT_CAPABILITIES_IN_META)) return 'input_required';
  if (!multiRoundTrip && method === 'initialize' && declaresUrlElicitation(request.body, CLIENT_CAPABILITIES_IN_INITIALIZE)) return 'url_elicitation_error';
  return method === 'tools/call' ? 'tool_error' : 'link_error';
}

/** Whether the answer hands the client a consent link (only those make the gateway issue one). */
export function carriesLink(answer: ElicitationAnswer): boolean {
  return answer !== 'not_connected';
}

function objectAt(value: unknown, key: string): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return undefined;
  const inner = (value as Record<string, unknown>)[key];
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? (inner as Record<string, unknown>) : undefined;
}

/** The client capabilities at `path` declare URL elicitation: their `elicitation.url` is an object. */
function declaresUrlElicitation(body: Buffer | undefined, path: readonly string[]): boolean {
  if (body === undefined) return false;
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  return [...path, 'elicitation', 'url'].reduce<unknown>((value, key) => objectAt(value, key), message) !== undefined;
}
