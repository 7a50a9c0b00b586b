import { describe, expect, it } from 'vitest';
import { answerPreflight } from '../../../../src/decision/steps/preflight.js';
import { facts, route, stateAt, stepRuntime } from '../../../helpers/decision.js';

const runtime = stepRuntime(route('calc'));

describe('preflight step', () => {
  it('an OPTIONS with Origin and Access-Control-Request-Method is answered 204 with the preflight headers', () => {
    const request = facts('OPTIONS', '/calc/mcp', { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, mcp-session-id, x-evil' });
    const answer = answerPreflight(stateAt(runtime, request));
    expect(answer?.status).toBe(204);
    expect(answer?.headers['access-control-allow-headers']).toBe('authorization, mcp-session-id');
  });

  it.each<[string, Record<string, string>]>([
    ['a plain OPTIONS (no Origin)', { 'access-control-request-method': 'POST' }],
    ['an OPTIONS with Origin but no Access-Control-Request-Method', { origin: 'https://app.example' }],
  ])('%s is not a preflight: it goes on to authentication', (_name, headers) => {
    expect(answerPreflight(stateAt(runtime, facts('OPTIONS', '/calc/mcp', headers)))).toBeUndefined();
  });

  it('a POST with preflight headers is not a preflight', () => {
    expect(answerPreflight(stateAt(runtime, facts('POST', '/calc/mcp', { origin: 'https://app.example', 'access-control-request-method': 'POST' })))).toBeUndefined();
  });
});
