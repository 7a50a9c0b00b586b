import { checkJsonStructure } from './json-structure.js';
import { isJsonMediaType } from '../lib/media-type.js';

export type JsonRpcId = string | number | null;

/** What policy needs from one JSON-RPC message; every field is read from the exact bytes forwarded upstream. */
export interface JsonRpcMessageFacts {
  /** Absent for responses, and when `method` is not a string. */
  readonly method: string | undefined;
  /**
   * `undefined` for notifications (no `id`). A request's id is a string or a safe integer; a response's may also be
   * null (anything else is refused).
   */
  readonly id: JsonRpcId | undefined;
  /** `params.name` of `tools/call`, when a string. */
  readonly toolName?: string;
  /** `params.uri` of `resources/read|subscribe|unsubscribe`, or `params.ref.uri` of a `ref/resource` completion. */
  readonly resourceUri?: string;
  /** `params.name` of `prompts/get`, or `params.ref.name` of a `ref/prompt` completion. */
  readonly promptName?: string;
  /**
   * `params._meta["io.modelcontextprotocol/protocolVersion"]` (MCP 2026-07-28), when present; a value that is not
   * a string is kept as its JSON text, which no MCP-Protocol-Version header can equal.
   */
  readonly protocolVersion?: string;
  /**
   * `params._meta.traceparent` and `tracestate` (W3C Trace Context in `_meta`, MCP SEP-414), when `traceparent` is a
   * string: the message's own trace, which the upstream call continues when tracing is on. Never a policy input.
   */
  readonly traceContext?: MessageTraceContext;
}

export interface MessageTraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

export type JsonRpcInvalidReason =
  | 'not_json'
  | 'batch'
  | 'not_object'
  | 'duplicate_keys'
  | 'unsupported_content_type'
  /** Valid JSON, but not a JSON-RPC 2.0 request, notification or response (JSON-RPC 2.0 §4, §5). */
  | 'not_jsonrpc';

export type JsonRpcInspection =
  | { readonly kind: 'message'; readonly message: JsonRpcMessageFacts }
  /** `id` is always null: a body we refuse to evaluate is not trusted for its id either (JSON-RPC 2.0 §5). */
  | { readonly kind: 'invalid'; readonly reason: JsonRpcInvalidReason; readonly id: JsonRpcId };

/** The operand a method acts on, which per-tool / per-resource / per-prompt policy keys on. */
export type TargetKind = 'tool' | 'resource' | 'prompt';

/** Methods of MCP 2025-11-25 that name one tool, resource or prompt in their params. */
const TARGET_KINDS: ReadonlyMap<string, TargetKind> = new Map([
  ['tools/call', 'tool'],
  ['resources/read', 'resource'],
  ['resources/subscribe', 'resource'],
  ['resources/unsubscribe', 'resource'],
  ['prompts/get', 'prompt'],
]);

/** `completion/complete` names a prompt or a resource (template), depending on `params.ref.type`. */
const COMPLETION = 'completion/complete';
const BOTH_KINDS: readonly TargetKind[] = ['prompt', 'resource'];

export function targetKind(method: string | undefined): TargetKind | undefined {
  return method === undefined ? undefined : TARGET_KINDS.get(method);
}

/**
 * The kinds of object a message may name, so their policy applies. A completion whose `ref` cannot be read may
 * name either a prompt or a resource: both apply.
 */
export function targetKinds(message: JsonRpcMessageFacts): readonly TargetKind[] {
  const kind = targetKind(message.method);
  if (kind !== undefined) return [kind];
  if (message.method !== COMPLETION) return [];
  if (message.promptName !== undefined) return ['prompt'];
  if (message.resourceUri !== undefined) return ['resource'];
  return BOTH_KINDS;
}

/** Deeper bodies are refused as not_json; MCP messages, tool arguments included, are far shallower. */
export const MAX_JSON_DEPTH = 64;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function invalid(reason: JsonRpcInvalidReason): JsonRpcInspection {
  return { kind: 'invalid', reason, id: null };
}

/**
 * `application/json`, parameters allowed, and no charset but UTF-8: a body decoded differently upstream would
 * be a different message from the one evaluated here.
 */
function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === 'application/json') return true;
  if (contentType === undefined || !isJsonMediaType(contentType)) return false;
  return contentType.split(';').slice(1).every((parameter) => {
    const [name = '', value = ''] = parameter.split('=', 2);
    if (name.trim().toLowerCase() !== 'charset') return true;
    const charset = value.trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    return charset === 'utf-8' || charset === 'utf8';
  });
}

function decode(body: Buffer | string): string | undefined {
  if (typeof body === 'string') return body;
  try {
    return UTF8.decode(body);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function ownString(object: Record<string, unknown> | undefined, key: string): string | undefined {
  if (!object || !Object.hasOwn(object, key)) return undefined;
  const value = object[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * MCP's RequestId: a string or an integer. Integers are held to the safe range: beyond it, and for `1e400`
 * (Infinity), `1.5` or `-1e400`, the number this parser reads is not the one every upstream reads or echoes back
 * (JSON.stringify writes Infinity as `null`), and the answer would no longer match the request it answers.
 */
function isRequestId(value: unknown): value is string | number {
  return typeof value === 'string' || Number.isSafeInteger(value);
}

/**
 * JSON-RPC 2.0 §4/§5: a request or notification (string `method`, structured `params`, a request id as above), or
 * a response (an `id` and exactly one of `result` / `error`; its id may also be null, for a request whose id could
 * not be read). Anything else is refused rather than forwarded: a message whose id policy cannot read
 * (`"id": {}`, `"id": 1e400`) would otherwise skip the list filtering that is matched by id, and an
 * upstream may read such a message its own way.
 */
function isJsonRpcMessage(message: Record<string, unknown>): boolean {
  if (message.jsonrpc !== '2.0') return false;
  const hasId = Object.hasOwn(message, 'id');
  if (Object.hasOwn(message, 'method')) {
    const params = message.params;
    const structured = params === undefined || (typeof params === 'object' && params !== null);
    return typeof message.method === 'string' && structured && (!hasId || isRequestId(message.id));
  }
  return hasId && (isRequestId(message.id) || message.id === null) && Object.hasOwn(message, 'result') !== Object.hasOwn(message, 'error');
}

const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

/** The request's declared protocol version in `params._meta` (MCP 2026-07-28), when there is one. */
function metaProtocolVersion(meta: Record<string, unknown>): string | undefined {
  if (!Object.hasOwn(meta, PROTOCOL_VERSION_META)) return undefined;
  const version = meta[PROTOCOL_VERSION_META];
  return typeof version === 'string' ? version : JSON.stringify(version);
}

/** `_meta.traceparent` / `tracestate` as the message carries them; their W3C format is checked where they are used. */
function metaTraceContext(meta: Record<string, unknown>): MessageTraceContext | undefined {
  const traceparent = ownString(meta, 'traceparent');
  if (traceparent === undefined) return undefined;
  const tracestate = ownString(meta, 'tracestate');
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}

function facts(message: Record<string, unknown>): JsonRpcMessageFacts {
  const params = Object.hasOwn(message, 'params') && isObject(message.params) ? message.params : undefined;
  const operation = operationFacts(message, params);
  const meta = params && Object.hasOwn(params, '_meta') && isObject(params._meta) ? params._meta : undefined;
  if (!meta) return operation;
  const protocolVersion = metaProtocolVersion(meta);
  const traceContext = metaTraceContext(meta);
  if (protocolVersion === undefined && traceContext === undefined) return operation;
  return { ...operation, ...(protocolVersion !== undefined && { protocolVersion }), ...(traceContext && { traceContext }) };
}

function operationFacts(message: Record<string, unknown>, params: Record<string, unknown> | undefined): JsonRpcMessageFacts {
  const method = ownString(message, 'method');
  const id = Object.hasOwn(message, 'id') ? (message.id as JsonRpcId) : undefined;
  if (method === COMPLETION) return completionFacts(method, id, params);
  switch (targetKind(method)) {
    case 'tool': {
      const toolName = ownString(params, 'name');
      return toolName === undefined ? { method, id } : { method, id, toolName };
    }
    case 'resource': {
      const resourceUri = ownString(params, 'uri');
      return resourceUri === undefined ? { method, id } : { method, id, resourceUri };
    }
    case 'prompt': {
      const promptName = ownString(params, 'name');
      return promptName === undefined ? { method, id } : { method, id, promptName };
    }
    case undefined:
      return { method, id };
  }
}

/** The prompt or resource a completion request names through `params.ref`. */
function completionFacts(method: string, id: JsonRpcId | undefined, params: Record<string, unknown> | undefined): JsonRpcMessageFacts {
  const ref = params && Object.hasOwn(params, 'ref') && isObject(params.ref) ? params.ref : undefined;
  const type = ownString(ref, 'type');
  const promptName = type === 'ref/prompt' ? ownString(ref, 'name') : undefined;
  if (promptName !== undefined) return { method, id, promptName };
  const resourceUri = type === 'ref/resource' ? ownString(ref, 'uri') : undefined;
  return resourceUri === undefined ? { method, id } : { method, id, resourceUri };
}

/**
 * Inspects one POST body (already read, size-limited) for policy. Only a single JSON-RPC object is a message:
 * MCP 2025-06+ forbids batches, and anything a second parser could read differently (duplicate keys, other
 * charsets, invalid UTF-8) is refused rather than guessed at.
 */
export function inspectJsonRpcBody(body: Buffer | string, contentType: string | undefined): JsonRpcInspection {
  if (!isJsonContentType(contentType)) return invalid('unsupported_content_type');
  const text = decode(body);
  if (text === undefined) return invalid('not_json');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid('not_json');
  }
  if (Array.isArray(value)) return invalid('batch');
  if (!isObject(value)) return invalid('not_object');
  switch (checkJsonStructure(text, value, MAX_JSON_DEPTH)) {
    case 'too_deep':
      return invalid('not_json');
    case 'duplicate_keys':
      return invalid('duplicate_keys');
    case 'ok':
      return isJsonRpcMessage(value) ? { kind: 'message', message: facts(value) } : invalid('not_jsonrpc');
  }
}
