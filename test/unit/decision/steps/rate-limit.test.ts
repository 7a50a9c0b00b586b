import { describe, expect, it } from 'vitest';
import { takeRateLimit } from '../../../../src/decision/steps/rate-limit.js';
import { caller, facts, route, stateAt, stepRuntime, verdict } from '../../../helpers/decision.js';

describe('rate limit step', () => {
  it('a route without rate_limit: nothing to wait for', () => {
    const runtime = stepRuntime(route('calc'));
    expect(takeRateLimit(stateAt(runtime, facts('POST', '/calc/mcp'), { auth: caller() }))).toBeUndefined();
  });

  it('per caller: past the bucket → 429 rate_limited; another caller is not affected', async () => {
    const runtime = stepRuntime(route('calc', '    rate_limit: { requests: 2, per: 1h }'));
    const take = (subject: string) => verdict(() => takeRateLimit(stateAt(runtime, facts('POST', '/calc/mcp'), { auth: caller(subject) })));
    expect([await take('alice'), await take('alice'), await take('alice')]).toEqual(['passed', 'passed', 'rate_limited:rate_limit_exceeded']);
    expect(await take('bob')).toBe('passed');
  });
});
