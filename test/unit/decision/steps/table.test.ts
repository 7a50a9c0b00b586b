import { describe, expect, it } from 'vitest';
import { STEPS } from '../../../../src/decision/steps.js';

describe('the steps as data', () => {
  it('run in the order of the contract (ARCHITECTURE.md "One request, end to end")', () => {
    expect(STEPS.map((step) => `${step.stage}: ${step.name}`)).toEqual([
      'admit: route',
      'admit: origin',
      'admit: preflight',
      'admit: token',
      'admit: method',
      'admit: route scopes',
      'admit: rate limit',
      'admit: session',
      'authorize: message',
      'authorize: message without body',
      'authorize: operation scopes',
      'authorize: upstream headers',
      'authorize: stream or request slot',
    ]);
  });

  it('every door runs every admission step; only a door with the body reads it; only the proxy takes slots', () => {
    const doorsOf = (name: string) => STEPS.find((step) => step.name === name)?.doors;
    for (const step of STEPS.filter((row) => row.stage === 'admit')) expect(step.doors).toEqual(['proxy', 'listener_with_body', 'listener_without_body']);
    expect(doorsOf('message')).toEqual(['proxy', 'listener_with_body']);
    expect(doorsOf('message without body')).toEqual(['listener_without_body']);
    expect(doorsOf('stream or request slot')).toEqual(['proxy']);
  });
});
