import type { JsonRpcId, JsonRpcMessageFacts } from './jsonrpc.js';

/** The list methods `policy.hide_unauthorized` filters: the result array, and the operation each entry stands for. */
const LISTS: ReadonlyMap<string, { readonly field: string; readonly facts: (entry: Record<string, unknown>) => JsonRpcMessageFacts }> =
  new Map([
    ['tools/list', { field: 'tools', facts: (entry) => operation('tools/call', 'toolName', entry.name) }],
    ['resources/list', { field: 'resources', facts: (entry) => operation('resources/read', 'resourceUri', entry.uri) }],
    [
      'resources/templates/list',
      // Policy keys are exact URIs: a template is matched as one (and is shown when reading needs no extra scope).
      { field: 'resourceTemplates', facts: (entry) => operation('resources/read', 'resourceUri', entry.uriTemplate) },
    ],
    ['prompts/list', { field: 'prompts', facts: (entry) => operation('prompts/get', 'promptName', entry.name) }],
  ]);

function operation(method: string, operand: 'toolName' | 'resourceUri' | 'promptName', value: unknown): JsonRpcMessageFacts {
  // A non-string operand is "unreadable": requiredScopes then asks for every configured operand's scopes.
  return typeof value === 'string' ? { method, id: undefined, [operand]: value } : { method, id: undefined };
}

export function isFilteredList(method: string | undefined): boolean {
  return method !== undefined && LISTS.has(method);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One message of the answer to list request `request` (method, and id: none for a list method sent as a
 * notification, which a lenient upstream may answer all the same), as the client may get it. Messages the
 * server sends on its own (a `method`, neither `result` nor `error`: notifications, server requests) pass
 * unchanged. Anything else stands for the response to that request, the one message that must be filtered: its
 * entries the caller may not use are removed. When it cannot be matched to the request — another id (`null` from
 * an upstream that could not read the id, a result meant for some other request), a `method` beside a `result`
 * (clients differ on which it is), not an object — it is withheld (`undefined`): the caller refuses the answer.
 * `allowed` decides per entry, from the operation the entry would be used with (tools/call of that tool,
 * resources/read of that URI, prompts/get). An entry that is not an object is removed: it cannot be judged.
 */
export function filterListResponse(
  message: unknown,
  request: { readonly method: string; readonly id: JsonRpcId | undefined },
  allowed: (operation: JsonRpcMessageFacts) => boolean,
): unknown {
  const list = LISTS.get(request.method);
  if (!list) return message;
  if (!isObject(message)) return undefined;
  const answers = Object.hasOwn(message, 'result') || Object.hasOwn(message, 'error');
  if (Object.hasOwn(message, 'method')) return answers ? undefined : message;
  if (message.id !== request.id) return undefined;
  return filterEntries(message, list.field, list.facts, allowed);
}

/**
 * For responses with no request to match them to: those replayed on a GET stream after `Last-Event-ID` (a client
 * could drop the POST stream of a tools/list on purpose and resume it). A result holding exactly one of the list
 * fields (tools, resources, resourceTemplates, prompts) as an array is filtered as that list.
 */
export function filterReplayedListResponse(message: unknown, allowed: (operation: JsonRpcMessageFacts) => boolean): unknown {
  if (!isObject(message) || !isObject(message.result)) return message;
  const result = message.result;
  const lists = [...LISTS.values()].filter((list) => Array.isArray(result[list.field]));
  const [list] = lists;
  return lists.length === 1 && list ? filterEntries(message, list.field, list.facts, allowed) : message;
}

function filterEntries(
  message: Record<string, unknown>,
  field: string,
  facts: (entry: Record<string, unknown>) => JsonRpcMessageFacts,
  allowed: (operation: JsonRpcMessageFacts) => boolean,
): unknown {
  const result = message.result;
  if (Object.hasOwn(message, 'method') || !isObject(result) || !Array.isArray(result[field])) return message;
  const entries = result[field] as unknown[];
  const visible = entries.filter((entry) => isObject(entry) && allowed(facts(entry)));
  // What this caller sees is its own: no cache may serve it to another caller (MCP 2026-07-28 `cacheScope`).
  return { ...message, result: { ...result, [field]: visible, cacheScope: 'private' } };
}
