import { describe, expect, it } from 'vitest';
import { effectiveScopes, grantsAll } from '../../../src/policy/scopes.js';
import { impliedScopes } from '../../../src/config/compile.js';
import type { PolicySettings } from '../../../src/config/types.js';
import { filterListResponse, filterReplayedListResponse, isFilteredList } from '../../../src/policy/list-visibility.js';
import { requiredScopes } from '../../../src/policy/required-scopes.js';

const policy: PolicySettings = {
  scopes: ['mcp:tools'],
  tools: new Map([['multiply', ['calc:write']], ['divide', ['calc:admin']]]),
  methods: new Map([['prompts/get', ['mcp:prompts']]]),
  // Compiled policies key resources by their normal form (K1): `file:///{path}` is `file:///%7Bpath%7D`.
  resources: new Map([['file:///secret', ['files:secret']], ['file:///%7Bpath%7D', ['files:read']]]),
  prompts: new Map([['review', ['code:review']]]),
  hideUnauthorized: true,
  implies: impliedScopes({ 'calc:admin': ['calc:write'] }),
  challengeScopes: [],
};

/** The production predicate: the same requiredScopes/grantsAll check the operation itself gets. */
function allowedFor(granted: string[]) {
  const scopes = effectiveScopes(new Set(granted), policy.implies);
  return (operation: Parameters<typeof requiredScopes>[1]) => grantsAll(requiredScopes(policy, operation), scopes);
}

const response = (result: unknown, id: string | number = 7) => ({ jsonrpc: '2.0', id, result });
/** A filtered list result: marked for the caller only (MCP 2026-07-28 `cacheScope`). */
const filtered = (result: object, id: string | number = 7) => response({ ...result, cacheScope: 'private' }, id);
const tools = [{ name: 'add' }, { name: 'multiply' }, { name: 'divide' }];

describe('filterListResponse', () => {
  it.each<[string, string[], string[]]>([
    ['route scope only', ['mcp:tools'], ['add']],
    ['calc:write', ['mcp:tools', 'calc:write'], ['add', 'multiply']],
    ['calc:admin implies calc:write', ['mcp:tools', 'calc:admin'], ['add', 'multiply', 'divide']],
  ])('tools/list with %s', (_title, granted, visible) => {
    const result = filterListResponse(response({ tools, nextCursor: 'c2' }), { method: 'tools/list', id: 7 }, allowedFor(granted));
    expect(result).toEqual(filtered({ tools: visible.map((name) => ({ name })), nextCursor: 'c2' }));
  });

  it('resources/list and resources/templates/list key on uri / uriTemplate', () => {
    const allowed = allowedFor(['mcp:tools']);
    const resources = filterListResponse(
      response({ resources: [{ uri: 'file:///public' }, { uri: 'file:///secret' }] }),
      { method: 'resources/list', id: 7 },
      allowed,
    );
    expect(resources).toEqual(filtered({ resources: [{ uri: 'file:///public' }] }));
    const templates = filterListResponse(
      response({ resourceTemplates: [{ uriTemplate: 'file:///{path}' }, { uriTemplate: 'db://{table}' }] }),
      { method: 'resources/templates/list', id: 7 },
      allowed,
    );
    expect(templates).toEqual(filtered({ resourceTemplates: [{ uriTemplate: 'db://{table}' }] }));
  });

  it('prompts/list needs the prompts/get method scope as well as the prompt scope', () => {
    const prompts = response({ prompts: [{ name: 'summarize' }, { name: 'review' }] });
    const request = { method: 'prompts/list', id: 7 };
    expect(filterListResponse(prompts, request, allowedFor(['mcp:tools']))).toEqual(filtered({ prompts: [] }));
    expect(filterListResponse(prompts, request, allowedFor(['mcp:tools', 'mcp:prompts']))).toEqual(filtered({ prompts: [{ name: 'summarize' }] }));
  });

  it('entries that cannot be judged are hidden: not an object, or a name that is not a string', () => {
    const odd = response({ tools: ['add', null, { name: 42 }, { name: 'add' }] });
    expect(filterListResponse(odd, { method: 'tools/list', id: 7 }, allowedFor(['mcp:tools']))).toEqual(filtered({ tools: [{ name: 'add' }] }));
  });

  it.each<[string, unknown]>([
    ['an error response', { jsonrpc: '2.0', id: 7, error: { code: -1, message: 'x' } }],
    ['a server request reusing the id', { jsonrpc: '2.0', id: 7, method: 'sampling/createMessage', params: { tools } }],
    ['a notification', { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } }],
    ['a result without the list', response({ other: tools })],
  ])('leaves %s unchanged', (_title, message) => {
    expect(filterListResponse(message, { method: 'tools/list', id: 7 }, () => false)).toBe(message);
  });

  it.each<[string, unknown]>([
    ['another id (a result meant for another request)', response({ tools }, 8)],
    ['a string id equal in digits', response({ tools }, '7')],
    ['id null (the echo of an id the upstream could not read)', response({ tools }, null as unknown as number)],
    ['no id', { jsonrpc: '2.0', result: { tools } }],
    ['an error for another id', { jsonrpc: '2.0', id: 8, error: { code: -1, message: 'x' } }],
    ['a method beside the result (clients differ on which it is)', { jsonrpc: '2.0', id: 7, method: 'notifications/message', result: { tools } }],
    ['not an object (a batch)', [response({ tools })]],
    ['not an object (a scalar)', 'tools'],
  ])('K5 withholds %s: the answer is refused, never passed unfiltered', (_title, message) => {
    expect(filterListResponse(message, { method: 'tools/list', id: 7 }, () => false)).toBeUndefined();
  });

  it('K5 a list method sent as a notification: a response without an id is filtered, one with an id withheld', () => {
    const request = { method: 'tools/list', id: undefined };
    expect(filterListResponse({ jsonrpc: '2.0', result: { tools } }, request, allowedFor(['mcp:tools']))).toEqual({
      jsonrpc: '2.0',
      result: { tools: [{ name: 'add' }], cacheScope: 'private' },
    });
    expect(filterListResponse(response({ tools }, null as unknown as number), request, () => true)).toBeUndefined();
  });

  it.each<[string, boolean]>([
    ['tools/list', true],
    ['resources/list', true],
    ['resources/templates/list', true],
    ['prompts/list', true],
    ['tools/call', false],
    ['roots/list', false],
  ])('isFilteredList(%s) → %s', (method, expected) => {
    expect(isFilteredList(method)).toBe(expected);
  });
});

describe('filterReplayedListResponse (responses replayed on a GET stream)', () => {
  const allowed = allowedFor(['mcp:tools']);

  it.each<[string, unknown, unknown]>([
    ['a tools result, whatever its id', response({ tools }, 'replayed-3'), filtered({ tools: [{ name: 'add' }] }, 'replayed-3')],
    ['a resources result', response({ resources: [{ uri: 'file:///secret' }, { uri: 'file:///a' }] }), filtered({ resources: [{ uri: 'file:///a' }] })],
    ['a result with two list fields is left alone (not a list result)', response({ tools, prompts: [] }), response({ tools, prompts: [] })],
    ['a notification is left alone', { jsonrpc: '2.0', method: 'notifications/tools/list_changed', result: { tools } }, { jsonrpc: '2.0', method: 'notifications/tools/list_changed', result: { tools } }],
    ['a tool call result is left alone', response({ content: [{ type: 'text', text: 'x' }] }), response({ content: [{ type: 'text', text: 'x' }] })],
  ])('%s', (_title, message, expected) => {
    expect(filterReplayedListResponse(message, allowed)).toEqual(expected);
  });
});
