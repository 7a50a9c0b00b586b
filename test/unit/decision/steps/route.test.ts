import { describe, expect, it } from 'vitest';
import { createDecisionState } from '../../../../src/decision/state.js';
import { matchRoute } from '../../../../src/decision/steps/route.js';
import { facts, route, stepRuntime, verdict } from '../../../helpers/decision.js';

const runtime = stepRuntime(route('calc'));

describe('route step', () => {
  it('matches the exact path, the query left aside', async () => {
    const state = createDecisionState(runtime, facts('POST', '/calc/mcp?session=1'), 'proxy');
    expect(await verdict(() => matchRoute(state))).toBe('passed');
    expect(state.entry?.route.name).toBe('calc');
  });

  it.each(['/calc/mcp/', '/CALC/mcp', '/calc', '/calc/mcp/../mcp', '/other/mcp'])('%s → 404 not_found, no route', async (url) => {
    const state = createDecisionState(runtime, facts('POST', url), 'proxy');
    expect(await verdict(() => matchRoute(state))).toBe('not_found');
    expect(state.entry).toBeUndefined();
  });
});
