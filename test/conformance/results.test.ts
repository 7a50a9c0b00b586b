import { describe, expect, it } from 'vitest';
import { judge, scenarioOfResultDir, type ScenarioResult } from './results.js';

const pass = (scenario: string): ScenarioResult => ({ scenario, checks: [{ id: scenario, status: 'SUCCESS' }] });
const fail = (scenario: string): ScenarioResult => ({
  scenario,
  checks: [
    { id: `${scenario}-a`, status: 'SUCCESS' },
    { id: `${scenario}-b`, status: 'FAILURE', errorMessage: 'broken' },
  ],
});
const warn = (scenario: string): ScenarioResult => ({ scenario, checks: [{ id: scenario, status: 'WARNING' }, { id: 'info', status: 'INFO' }] });

describe('conformance results', () => {
  it.each([
    ['server-tools-call-image-2026-11-22T06-56-34-631Z', 'tools-call-image'],
    ['server-dns-rebinding-protection-2025-01-02T03-04-05-006Z', 'dns-rebinding-protection'],
    ['client-initialize-2026-11-22T06-56-34-631Z', undefined],
    ['server-ping', undefined],
  ])('the result directory %s is scenario %s', (name, scenario) => {
    expect(scenarioOfResultDir(name)).toBe(scenario);
  });

  it.each([
    ['auth/scope-step-up-2026-11-24T08-59-06-996Z', 'auth/scope-step-up'],
    ['auth/2025-03-26-oauth-endpoint-fallback-2026-11-24T08-59-06-996Z', 'auth/2025-03-26-oauth-endpoint-fallback'],
    ['initialize-2026-11-22T06-56-34-631Z', 'initialize'],
    ['auth/basic-cimd', undefined],
  ])('the client result directory %s is scenario %s', (name, scenario) => {
    expect(scenarioOfResultDir(name, 'client')).toBe(scenario);
  });

  it('in the client phase a warning is a failure (a missed SHOULD of the client)', () => {
    expect(judge([warn('auth/basic-cimd')], {}, { warningsFail: true }).unexpectedFailures.map((outcome) => outcome.scenario)).toEqual(['auth/basic-cimd']);
    expect(judge([warn('auth/basic-cimd')], { 'auth/basic-cimd': 'reason' }, { warningsFail: true }).ok).toBe(true);
  });

  it.each([
    ['every scenario passes', [pass('ping'), pass('tools-list')], {}, true],
    ['warnings alone do not fail', [warn('server-sse-polling')], {}, true],
    ['an unlisted failure fails', [pass('ping'), fail('tools-list')], {}, false],
    ['a listed failure is accepted', [pass('ping'), fail('tools-list')], { 'tools-list': 'reason' }, true],
    ['a listed scenario that passes is stale', [pass('ping'), pass('tools-list')], { 'tools-list': 'reason' }, false],
    ['a listed scenario that did not run is stale', [pass('ping')], { 'tools-list': 'reason' }, false],
    ['no results at all fail', [], {}, false],
  ])('%s', (_case, results, expected, ok) => {
    expect(judge(results, expected).ok).toBe(ok);
  });

  it('names the failing checks and the stale entries', () => {
    const verdict = judge([fail('tools-list'), pass('ping')], { ping: 'reason' });
    expect(verdict.unexpectedFailures.map((outcome) => [outcome.scenario, outcome.failures.map((check) => check.id)])).toEqual([
      ['tools-list', ['tools-list-b']],
    ]);
    expect(verdict.staleExpectations).toEqual(['ping']);
  });
});
