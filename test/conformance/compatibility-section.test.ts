import { describe, expect, it } from 'vitest';
import { conformanceSection, renderConformanceSection, replaceConformanceSection, type PhaseFigures } from './compatibility-section.js';
import { judge, type ScenarioResult } from './results.js';

const pass = (scenario: string): ScenarioResult => ({ scenario, checks: [{ id: scenario, status: 'SUCCESS' }, { id: `${scenario}-w`, status: 'WARNING' }] });
const fail = (scenario: string): ScenarioResult => ({ scenario, checks: [{ id: scenario, status: 'FAILURE' }] });

function figures(version: string, mode: 'server' | 'client', results: ScenarioResult[], expected: Record<string, string> = {}): PhaseFigures {
  return { version, mode, expected, verdict: judge(results, expected, { warningsFail: mode === 'client' }) };
}

const MATRIX = '# Compatibility with MCP clients\n\n| Client | Version |\n|---|---|\n| a | 1 |\n';

describe('the conformance section of docs/compatibility.md', () => {
  const phases = [
    figures('0.1.16', 'server', [pass('ping'), pass('tools-list')]),
    figures('0.2.0-alpha.12', 'client', [pass('auth/iss-supported@2026-07-28'), fail('sep-2322-client-request-state')], { 'sep-2322-client-request-state': 'login answers no multi round-trip input | requests' }),
  ];

  it('one row per release and phase with its figures, then each expected failure with its reason', () => {
    const section = renderConformanceSection(phases);
    expect(section).toContain('| 0.1.16 | server scenarios through the gateway | 2 | 2 | 0 | 2 | pass |');
    // In the client phase a warning is a failure: the passing-with-a-warning scenario fails too.
    expect(section).toMatch(/\| 0\.2\.0-alpha\.12 \| client scenarios .* \| 2 \| 0 \| 2 \(1 expected\) \| 1 \| fail \|/);
    expect(section).toContain('- 0.2.0-alpha.12, client: `sep-2322-client-request-state`: login answers no multi round-trip input \\| requests');
  });

  it('scenarios failing for the same reason share one line', () => {
    const same = figures('0.2.0-alpha.12', 'server', [fail('caching'), fail('caching@2026-07-28')], { caching: 'no 2026 upstream', 'caching@2026-07-28': 'no 2026 upstream' });
    expect(renderConformanceSection([same])).toContain('- 0.2.0-alpha.12, server: `caching`, `caching@2026-07-28`: no 2026 upstream');
  });

  it('replaces the section of a file that has one, appends it to one that has none, and keeps what is above', () => {
    const first = replaceConformanceSection(MATRIX, phases);
    expect(first.startsWith(MATRIX)).toBe(true);
    const again = replaceConformanceSection(first, [phases[0] as PhaseFigures]);
    expect(again.startsWith(MATRIX)).toBe(true);
    expect(again).not.toContain('0.2.0-alpha.12');
    expect(conformanceSection(again)).toBe(`\n${renderConformanceSection([phases[0] as PhaseFigures])}`);
    expect(conformanceSection(MATRIX)).toBe('');
  });

  it('keeps a hand-written section that follows it', () => {
    const identityProviders = '\n## Identity providers\n\nglewlwyd: notes.\n';
    const replaced = replaceConformanceSection(`${replaceConformanceSection(MATRIX, phases)}${identityProviders}`, [phases[0] as PhaseFigures]);
    expect(replaced).toBe(`${replaceConformanceSection(MATRIX, [phases[0] as PhaseFigures])}${identityProviders}`);
  });
});
