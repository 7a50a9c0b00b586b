import { describe, expect, it } from 'vitest';
import type { PolicySettings } from '../../../src/config/types.js';
import { inspectJsonRpcBody, type JsonRpcMessageFacts } from '../../../src/policy/jsonrpc.js';
import { hasUnplaceableResourceUri, requiredScopes } from '../../../src/policy/required-scopes.js';

function policy(overrides: Partial<Record<'tools' | 'methods' | 'resources' | 'prompts', Record<string, string[]>>> & { scopes?: string[] } = {}): PolicySettings {
  const map = (entries: Record<string, string[]> | undefined) => new Map(Object.entries(entries ?? {}));
  return {
    scopes: overrides.scopes ?? [],
    tools: map(overrides.tools),
    methods: map(overrides.methods),
    resources: map(overrides.resources),
    prompts: map(overrides.prompts),
    hideUnauthorized: false,
    implies: new Map(),
    challengeScopes: [],
  };
}

const calc = policy({
  scopes: ['mcp:tools'],
  methods: { 'tools/call': ['mcp:call'], 'resources/read': ['mcp:read'] },
  tools: { multiply: ['mcp:tools', 'calc:write'], add: ['calc:add'], divide: ['calc:write', 'calc:divide'] },
  resources: { 'file:///secret': ['files:secret'], 'file:///public': [] },
  prompts: { summary: ['prompts:summary'], draft: ['prompts:draft'] },
});

const message = (method: string | undefined, extra: Partial<JsonRpcMessageFacts> = {}): JsonRpcMessageFacts => ({ method, id: 1, ...extra });

describe('requiredScopes', () => {
  it.each<[string, JsonRpcMessageFacts | undefined, string[]]>([
    ['GET/DELETE (no message) → route scopes only', undefined, ['mcp:tools']],
    ['response (no method) → route scopes only', message(undefined), ['mcp:tools']],
    ['unlisted method', message('tools/list'), ['mcp:tools']],
    ['C14 tool scopes after method scopes, deduplicated', message('tools/call', { toolName: 'multiply' }), ['mcp:tools', 'mcp:call', 'calc:write']],
    ['C14 another tool', message('tools/call', { toolName: 'add' }), ['mcp:tools', 'mcp:call', 'calc:add']],
    ['tool without extra scopes', message('tools/call', { toolName: 'echo' }), ['mcp:tools', 'mcp:call']],
    ['tool names are exact (case-sensitive)', message('tools/call', { toolName: 'Multiply' }), ['mcp:tools', 'mcp:call']],
    ['resource', message('resources/read', { resourceUri: 'file:///secret' }), ['mcp:tools', 'mcp:read', 'files:secret']],
    ['resource with empty list', message('resources/read', { resourceUri: 'file:///public' }), ['mcp:tools', 'mcp:read']],
    ['resources/subscribe uses resource scopes', message('resources/subscribe', { resourceUri: 'file:///secret' }), ['mcp:tools', 'files:secret']],
    ['resources/unsubscribe uses resource scopes', message('resources/unsubscribe', { resourceUri: 'file:///secret' }), ['mcp:tools', 'files:secret']],
    ['prompt', message('prompts/get', { promptName: 'summary' }), ['mcp:tools', 'prompts:summary']],
    ['tool name on a non-tool method is ignored', message('tools/list', { toolName: 'multiply' }), ['mcp:tools']],
  ])('%s', (_name, facts, expected) => {
    expect(requiredScopes(calc, facts)).toEqual(expected);
  });

  it.each<[string, JsonRpcMessageFacts, string[]]>([
    ['tools/call without a string name → every tool scope', message('tools/call'), ['mcp:tools', 'mcp:call', 'calc:write', 'calc:add', 'calc:divide']],
    ['resources/read without uri → every resource scope', message('resources/read'), ['mcp:tools', 'mcp:read', 'files:secret']],
    ['resources/subscribe without uri → every resource scope', message('resources/subscribe'), ['mcp:tools', 'files:secret']],
    ['prompts/get without name → every prompt scope', message('prompts/get'), ['mcp:tools', 'prompts:summary', 'prompts:draft']],
  ])('fail closed: %s', (_name, facts, expected) => {
    expect(requiredScopes(calc, facts)).toEqual(expected);
  });

  it.each(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel'])(
    'K2 %s (the operation behind a task is unknown) → every scope the policy names',
    (method) => {
      expect(requiredScopes(calc, message(method, { toolName: 'add' }))).toEqual([
        'mcp:tools', 'mcp:call', 'mcp:read', 'calc:write', 'calc:add', 'calc:divide', 'prompts:summary', 'prompts:draft', 'files:secret',
      ]);
    },
  );

  it('K2 a task method on a route without operation policies → route scopes only', () => {
    expect(requiredScopes(policy({ scopes: ['a'] }), message('tasks/result'))).toEqual(['a']);
  });

  it('fail closed only adds what is configured: no per-tool policy → route and method scopes', () => {
    expect(requiredScopes(policy({ scopes: ['a'], methods: { 'tools/call': ['b'] } }), message('tools/call'))).toEqual(['a', 'b']);
  });

  it.each<[string, JsonRpcMessageFacts, string[]]>([
    ['K1 a resource in another spelling', message('resources/read', { resourceUri: 'FILE://localhost/x/../secret' }), ['mcp:tools', 'mcp:read', 'files:secret']],
    ['K1 an unparsable resource URI → every resource scope', message('resources/read', { resourceUri: 'not a uri' }), ['mcp:tools', 'mcp:read', 'files:secret']],
    ['K2 completion of a prompt → that prompt', message('completion/complete', { promptName: 'summary' }), ['mcp:tools', 'prompts:summary']],
    ['K2 completion of a resource → that resource', message('completion/complete', { resourceUri: 'file:///secret' }), ['mcp:tools', 'files:secret']],
    ['K2 completion of nothing readable → every prompt and resource scope', message('completion/complete'), ['mcp:tools', 'prompts:summary', 'prompts:draft', 'files:secret']],
  ])('%s', (_name, facts, expected) => {
    expect(requiredScopes(calc, facts)).toEqual(expected);
  });

  it.each<[string, JsonRpcMessageFacts, boolean]>([
    ['unparsable URI', message('resources/read', { resourceUri: 'relative/x' }), true],
    ['unparsable URI in a completion', message('completion/complete', { resourceUri: ':' }), true],
    ['parsable URI', message('resources/read', { resourceUri: 'x:y' }), false],
    ['no URI', message('resources/read'), false],
  ])('K1 hasUnplaceableResourceUri: %s → %s', (_name, facts, expected) => {
    expect(hasUnplaceableResourceUri(calc, facts)).toBe(expected);
    expect(hasUnplaceableResourceUri(policy(), facts)).toBe(false);
  });

  it('empty policy → no scopes', () => {
    expect(requiredScopes(policy(), message('tools/call', { toolName: 'x' }))).toEqual([]);
  });

  it('F11 a \\u-escaped tools/call body needs the same scopes as the plain one', () => {
    const inspection = inspectJsonRpcBody('{"jsonrpc":"2.0","id":1,"method":"\\u0074ools/call","params":{"name":"multipl\\u0079"}}', 'application/json');
    if (inspection.kind !== 'message') throw new Error('expected a message');
    expect(requiredScopes(calc, inspection.message)).toEqual(['mcp:tools', 'mcp:call', 'calc:write']);
  });

  it('the route-only list is shared between requests and frozen, so no caller can change the next one', () => {
    const first = requiredScopes(calc, undefined);
    expect(() => (first as string[]).push('mutated')).toThrow(TypeError);
    expect(requiredScopes(calc, undefined)).toEqual(['mcp:tools']);
  });
});
