import { checkJsonStructure } from './json-structure.js';
import { isJsonMediaType } from '../media-type.js';

export type JsonRpcId = string | number | null;

/** What policy needs from one JSON-RPC message; every field is read from the exact bytes forwarded upstream. */
export interface JsonRpcMessageFacts {
  /** Absent for responses, and when `method` is not a string. */
  readonly method: string | undefined;
  /** `undefined` for notifications (no `id`) and for ids that are not a string, number or null. */
  readonly id: JsonRpcId | undefined;
  /** `params.name` of `tools/call`, when a string. */
  readonly toolName?: string;
  /** `params.uri` of `resources/read|subscribe|unsubscribe`, when a string. */
  readonly resourceUri?: string;
  /** `params.name` of `prompts/get`, when a string. */
  readonly promptName?: string;
}

export type JsonRpcInvalidReason = 'not_json' | 'batch' | 'not_object' | 'duplicate_keys' | 'unsupported_content_type';

export type JsonRpcInspection =
  | { readonly kind: 'message'; readonly message: JsonRpcMessageFacts }
  /** `id` is always null: a body we refuse to evaluate is not trusted for its id either (JSON-RPC 2.0 §5). */
  | { readonly kind: 'invalid'; readonly reason: JsonRpcInvalidReason; readonly id: JsonRpcId };

/** The operand a method acts on, which per-tool / per-resource / per-prompt policy keys on. */
export type TargetKind = 'tool' | 'resource' | 'prompt';

const TARGET_KINDS: ReadonlyMap<string, TargetKind> = new Map([
  ['tools/call', 'tool'],
  ['resources/read', 'resource'],
  ['resources/subscribe', 'resource'],
  ['resources/unsubscribe', 'resource'],
  ['prompts/get', 'prompt'],
]);

export function targetKind(method: string | undefined): TargetKind | undefined {
  return method === undefined ? undefined : TARGET_KINDS.get(method);
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

function messageId(message: Record<string, unknown>): JsonRpcId | undefined {
  if (!Object.hasOwn(message, 'id')) return undefined;
  const id = message.id;
  return typeof id === 'string' || typeof id === 'number' || id === null ? id : undefined;
}

function facts(message: Record<string, unknown>): JsonRpcMessageFacts {
  const method = ownString(message, 'method');
  const id = messageId(message);
  const params = Object.hasOwn(message, 'params') && isObject(message.params) ? message.params : undefined;
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

/**
 * Inspects one POST body (already read, size-limited) for policy. Only a single JSON-RPC object is a message:
 * MCP 2025-06+ forbids batches, and anything a second parser could read differently (duplicate keys, other
 * charsets, invalid UTF-8) is refused rather than guessed at (checklist F11).
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
  switch (checkJsonStructure(text, MAX_JSON_DEPTH)) {
    case 'too_deep':
      return invalid('not_json');
    case 'duplicate_keys':
      return invalid('duplicate_keys');
    case 'ok':
      return { kind: 'message', message: facts(value) };
  }
}
