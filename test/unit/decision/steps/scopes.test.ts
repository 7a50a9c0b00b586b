import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../../src/decision/refusal.js';
import { checkOperationScopes } from '../../../../src/decision/steps/operation-scopes.js';
import { checkRouteScopes } from '../../../../src/decision/steps/route-scopes.js';
import { caller, facts, route, stateAt, stepRuntime, verdict } from '../../../helpers/decision.js';

const runtime = stepRuntime(route('calc', '    policy: { scopes: [mcp], tools: { multiply: [calc:write] }, methods: { "resources/list": [files:read] } }'));

function requiredOf(step: () => void): readonly string[] | undefined {
  try {
    step();
    return undefined;
  } catch (error) {
    return error instanceof GatewayError ? error.requiredScopes : undefined;
  }
}

describe('route scopes step (before the body)', () => {
  it('a caller with the route scopes passes', async () => {
    expect(await verdict(() => checkRouteScopes(stateAt(runtime, facts('POST', '/calc/mcp'), { auth: caller('alice', ['mcp']) })))).toBe('passed');
  });

  it('a caller without them → 403 naming the route scopes', () => {
    const state = stateAt(runtime, facts('POST', '/calc/mcp'), { auth: caller('alice', ['other']) });
    expect(requiredOf(() => checkRouteScopes(state))).toEqual(['mcp']);
  });
});

describe('operation scopes step (with the message)', () => {
  const withMessage = (scopes: string[], message: { method: string; toolName?: string }) => {
    const state = stateAt(runtime, facts('POST', '/calc/mcp'), { auth: caller('alice', scopes) });
    state.message = { id: 1, ...message };
    return state;
  };

  it('a tool with its own scope → 403 naming every scope, route scopes first', () => {
    expect(requiredOf(() => checkOperationScopes(withMessage(['mcp'], { method: 'tools/call', toolName: 'multiply' })))).toEqual(['mcp', 'calc:write']);
  });

  it('a method with its own scope → 403 naming it', () => {
    expect(requiredOf(() => checkOperationScopes(withMessage(['mcp'], { method: 'resources/list' })))).toEqual(['mcp', 'files:read']);
  });

  it('holding them passes; a tool without a policy needs the route scopes only', async () => {
    expect(await verdict(() => checkOperationScopes(withMessage(['mcp', 'calc:write'], { method: 'tools/call', toolName: 'multiply' })))).toBe('passed');
    expect(await verdict(() => checkOperationScopes(withMessage(['mcp'], { method: 'tools/call', toolName: 'add' })))).toBe('passed');
  });

  it('without a message (GET, DELETE) only the route scopes count', async () => {
    expect(await verdict(() => checkOperationScopes(stateAt(runtime, facts('GET', '/calc/mcp'), { auth: caller('alice', ['mcp']) })))).toBe('passed');
  });
});
