import { describe, expect, it } from 'vitest';
import { checkOrigin } from '../../../../src/decision/steps/origin.js';
import { facts, route, stateAt, stepRuntime, verdict } from '../../../helpers/decision.js';

const listed = stepRuntime(route('app', '    cors: { allowed_origins: ["https://app.example"] }'), {}, 'allowed_hosts: ["gw.example.test", "127.0.0.1"]');

describe('origin step', () => {
  it('no Origin (not a browser): passes, no CORS headers', async () => {
    const state = stateAt(listed, facts('POST', '/app/mcp'));
    expect(await verdict(() => checkOrigin(state))).toBe('passed');
    expect(state.responseHeaders).toEqual({});
  });

  it('a listed Origin: passes, and every answer carries its CORS headers', async () => {
    const state = stateAt(listed, facts('POST', '/app/mcp', { origin: 'https://app.example' }));
    expect(await verdict(() => checkOrigin(state))).toBe('passed');
    expect(state.responseHeaders).toMatchObject({ 'access-control-allow-origin': 'https://app.example', vary: 'Origin' });
  });

  it('an unlisted loopback Origin → 403 origin_forbidden', async () => {
    expect(await verdict(() => checkOrigin(stateAt(listed, facts('POST', '/app/mcp', { origin: 'http://localhost:6274' }))))).toBe('origin_forbidden');
  });

  it('on a loopback gateway an unlisted foreign Origin is a rebinding page → 403 host_forbidden', async () => {
    expect(await verdict(() => checkOrigin(stateAt(listed, facts('POST', '/app/mcp', { origin: 'https://evil.example' }))))).toBe('host_forbidden');
  });

  it('a Host outside allowed_hosts → 403 host_forbidden, before any Origin is considered', async () => {
    const request = { ...facts('POST', '/app/mcp', { origin: 'https://app.example' }), host: 'rebound.attacker.test' };
    expect(await verdict(() => checkOrigin(stateAt(listed, request)))).toBe('host_forbidden');
  });

  it('the Host it checks is the one the door established (facts.host), not the raw header', async () => {
    const request = { ...facts('POST', '/app/mcp', { host: 'rebound.attacker.test' }), host: 'gw.example.test' };
    expect(await verdict(() => checkOrigin(stateAt(listed, request)))).toBe('passed');
  });
});
