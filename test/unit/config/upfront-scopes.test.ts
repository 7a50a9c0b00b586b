import { describe, expect, it } from 'vitest';
import { challengeScopes } from '../../../src/decision/challenge.js';
import { broadestScopes, impliedScopes } from '../../../src/config/compile.js';
import { protectedResourceMetadata } from '../../../src/doors/public/metadata-document.js';
import { compiled, configWith, parseObject } from './fixtures.js';

const POLICY = {
  'routes.0.scopes_supported': ['mcp:tools', 'calc:read'],
  'routes.0.policy.scopes': ['mcp:tools'],
  'routes.0.policy.methods': { 'resources/read': ['calc:read'] },
  'routes.0.policy.tools': { multiply: ['calc:write'], add: ['calc:read'] },
  'routes.0.policy.prompts': { audit: ['calc:admin'] },
  'routes.0.policy.resources': { 'calc://ledger': ['ledger:read'] },
  'routes.0.policy.implies': { 'calc:admin': ['calc:write'], 'calc:write': ['calc:read'] },
};

function route(edits: Record<string, unknown>) {
  const config = compiled(parseObject(configWith(edits)));
  const first = config.routes[0];
  if (first === undefined) throw new Error('no route');
  return first;
}

describe('policy.upfront_scopes', () => {
  it('is off by default: nothing is computed', () => {
    expect(route(POLICY).policy.upfrontScopes).toBeUndefined();
  });

  it('names every scope of route, methods, tools, prompts and resources, an implies chain by its broadest scope', () => {
    // calc:read (methods, tools.add) and calc:write (tools.multiply) are implied by calc:admin (prompts.audit).
    expect(route({ ...POLICY, 'routes.0.policy.upfront_scopes': true }).policy.upfrontScopes).toEqual([
      'mcp:tools',
      'calc:admin',
      'ledger:read',
    ]);
  });

  it('widens scopes_supported of the protected resource metadata when it names less', () => {
    const document = protectedResourceMetadata(route({ ...POLICY, 'routes.0.policy.upfront_scopes': true }));
    expect(document.scopes_supported).toEqual(['mcp:tools', 'calc:read', 'calc:admin', 'ledger:read']);
    expect(protectedResourceMetadata(route(POLICY)).scopes_supported).toEqual(['mcp:tools', 'calc:read']);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['upfront: every scope an operation can require', { ...POLICY, 'routes.0.policy.upfront_scopes': true }, ['mcp:tools', 'calc:admin', 'ledger:read']],
    ['default: the route scopes', POLICY, ['mcp:tools']],
    ['default, no route scopes: scopes_supported', { 'routes.0.scopes_supported': ['mcp:tools'], 'routes.0.policy.scopes': [] }, ['mcp:tools']],
    [
      'upfront with no scope configured anywhere on the route: scopes_supported, like the default (issue 12 gap 7)',
      { 'routes.0.scopes_supported': ['mcp:tools'], 'routes.0.policy.scopes': [], 'routes.0.policy.upfront_scopes': true },
      ['mcp:tools'],
    ],
  ])('the 401 challenge names %s', (_title, edits, expected) => {
    expect(challengeScopes(route(edits))).toEqual(expected);
  });
});

describe('broadestScopes', () => {
  it.each<[string, string[], Record<string, string[]>, string[]]>([
    ['no hierarchy: distinct, in order', ['a', 'b', 'a'], {}, ['a', 'b']],
    ['a chain collapses to its top, wherever it is listed', ['c', 'b', 'a'], { a: ['b'], b: ['c'] }, ['a']],
    ['unrelated scopes stay', ['x', 'b', 'a'], { a: ['b'] }, ['x', 'a']],
    ['scopes implying each other: the first listed stays', ['q', 'p'], { p: ['q'], q: ['p'] }, ['q']],
    ['a cycle below a broader scope: only the broader one', ['p', 'q', 'top'], { p: ['q'], q: ['p'], top: ['p'] }, ['top']],
  ])('%s', (_name, scopes, implies, expected) => {
    expect(broadestScopes(scopes, impliedScopes(implies))).toEqual(expected);
  });
});
