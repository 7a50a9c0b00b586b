import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REQUIRED_CLIENT_SCENARIOS, REQUIRED_NEXT_CLIENT_SCENARIOS, REQUIRED_NEXT_SERVER_SCENARIOS, REQUIRED_SERVER_SCENARIOS } from './required-scenarios.js';
import { judge, readResults, scenarioOfResultDir, type ScenarioResult } from './results.js';

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

  it('G4: a required scenario that did not run fails the verdict, named, even when everything that ran passed', () => {
    const verdict = judge([pass('ping')], {}, { required: ['ping', 'dns-rebinding-protection'] });
    expect(verdict.missing).toEqual(['dns-rebinding-protection']);
    expect(verdict.ok).toBe(false);
    expect(judge([pass('ping'), pass('dns-rebinding-protection')], {}, { required: ['ping', 'dns-rebinding-protection'] }).ok).toBe(true);
  });

  it('G4: a required scenario that is expected to fail still has to run', () => {
    expect(judge([pass('ping')], { 'tools-list': 'reason' }, { required: ['ping', 'tools-list'] }).missing).toEqual(['tools-list']);
  });

  it.each<[string, number | null, Record<string, string>, ScenarioResult[], boolean]>([
    ['exit 0', 0, {}, [pass('ping')], true],
    ['exit 1 with nothing expected to fail', 1, {}, [pass('ping')], false],
    ['killed (no exit code)', null, {}, [pass('ping')], false],
    ['exit 1 explained by a listed expected failure', 1, { 'tools-list': 'reason' }, [pass('ping'), fail('tools-list')], true],
    ['exit 2 even with a listed expected failure', 2, { 'tools-list': 'reason' }, [pass('ping'), fail('tools-list')], false],
  ])('G4: a suite that ended with %s', (_case, code, expected, results, ok) => {
    const verdict = judge(results, expected, { suiteExits: [{ suite: 'auth', code }] });
    expect(verdict.ok).toBe(ok);
    expect(verdict.failedSuites).toEqual(ok ? [] : [{ suite: 'auth', code }]);
  });

  it('G4: the required lists: 19 client scenarios (every 2025-11-25 auth one, backcompat, draft) and 32 server ones', () => {
    expect(REQUIRED_CLIENT_SCENARIOS).toHaveLength(19);
    expect(REQUIRED_SERVER_SCENARIOS).toHaveLength(32);
    expect(REQUIRED_SERVER_SCENARIOS).toContain('dns-rebinding-protection');
    for (const list of [REQUIRED_CLIENT_SCENARIOS, REQUIRED_SERVER_SCENARIOS]) expect(new Set(list).size).toBe(list.length);
  });

  it('the alpha required lists: the auth suite at both wires, draft, backcompat and the two DPoP scenarios (49); server scenarios at both wires (110)', () => {
    expect(REQUIRED_NEXT_CLIENT_SCENARIOS).toHaveLength(49);
    expect(REQUIRED_NEXT_CLIENT_SCENARIOS).toEqual(
      expect.arrayContaining(['auth/metadata-default', 'auth/metadata-default@2026-07-28', 'auth/iss-normalized', 'auth/authorization-server-migration', 'auth/dpop', 'auth/dpop-nonce']),
    );
    expect(REQUIRED_NEXT_SERVER_SCENARIOS).toHaveLength(110);
    for (const list of [REQUIRED_NEXT_CLIENT_SCENARIOS, REQUIRED_NEXT_SERVER_SCENARIOS]) expect(new Set(list).size).toBe(list.length);
  });

  it('a scenario run at another wire is another result: readResults names it <scenario>@<wire>', () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-results-'));
    mkdirSync(join(dir, 'auth', 'iss-supported-2026-11-24T08-59-06-996Z'), { recursive: true });
    writeFileSync(join(dir, 'auth', 'iss-supported-2026-11-24T08-59-06-996Z', 'checks.json'), JSON.stringify([{ id: 'x', status: 'SUCCESS' }]));
    expect(readResults(dir, 'client', '2026-07-28').map((result) => result.scenario)).toEqual(['auth/iss-supported@2026-07-28']);
    expect(readResults(dir, 'client').map((result) => result.scenario)).toEqual(['auth/iss-supported']);
  });
});
