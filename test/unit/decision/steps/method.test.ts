import { describe, expect, it } from 'vitest';
import { answerOtherMethods } from '../../../../src/decision/steps/method.js';
import { facts, route, stateAt, stepRuntime } from '../../../helpers/decision.js';

const runtime = stepRuntime(route('calc'));
const answerTo = (method: string) => answerOtherMethods(stateAt(runtime, facts(method, '/calc/mcp')));

describe('method step (after authentication)', () => {
  it.each(['GET', 'POST', 'DELETE'])('%s goes on', (method) => {
    expect(answerTo(method)).toBeUndefined();
  });

  it('OPTIONS → 204 with Allow', () => {
    expect(answerTo('OPTIONS')).toEqual({ status: 204, headers: { allow: 'GET, POST, DELETE, OPTIONS' } });
  });

  it.each(['PUT', 'PATCH', 'HEAD', 'PROPFIND', 'TRACE'])('%s → 405 with Allow', (method) => {
    expect(answerTo(method)).toEqual({ status: 405, headers: { allow: 'GET, POST, DELETE, OPTIONS' } });
  });
});
