import { describe, expect, it } from 'vitest';
import { recordAnswer } from '../../../../src/decision/after-answer.js';
import { checkSession } from '../../../../src/decision/steps/session.js';
import { caller, facts, route, stateAt, stepRuntime, verdict } from '../../../helpers/decision.js';

const runtime = stepRuntime(`${route('bound')}\n${route('open', '    sessions: { bind: false }')}`);
const withSession = (path: string, id: string, subject: string, door: 'proxy' | 'listener' = 'proxy') =>
  stateAt(runtime, facts('POST', path, { 'mcp-session-id': id }), { auth: caller(subject), door });

describe('session step', () => {
  it('no Mcp-Session-Id: nothing to check', () => {
    expect(checkSession(stateAt(runtime, facts('POST', '/bound/mcp'), { auth: caller() }))).toBeUndefined();
  });

  it.each(['a b', 'é', 'x'.repeat(257)])('a malformed id (%j) → 400 invalid_session_id', async (id) => {
    expect(await verdict(() => checkSession(withSession('/bound/mcp', id, 'alice')))).toBe('invalid_session_id:malformed_session_id');
  });

  it('sessions.bind: false keeps the id without asking the store', () => {
    const state = withSession('/open/mcp', 'open-1', 'alice');
    expect(checkSession(state)).toBeUndefined();
    expect(state.sessionId).toBe('open-1');
  });

  it('through the proxy: an id the upstream never issued to this caller → 404; the owner passes once it was bound', async () => {
    expect(await verdict(() => checkSession(withSession('/bound/mcp', 'proxy-1', 'alice')))).toBe('session_not_found:session_not_bound');
    const initialize = stateAt(runtime, facts('POST', '/bound/mcp'), { auth: caller('alice') });
    initialize.message = { method: 'initialize', id: 1 };
    expect(await recordAnswer(initialize, { status: 200, sessionIdHeader: 'proxy-1' })).toBe(true);
    expect(await verdict(() => checkSession(withSession('/bound/mcp', 'proxy-1', 'alice')))).toBe('passed');
    expect(await verdict(() => checkSession(withSession('/bound/mcp', 'proxy-1', 'bob')))).toBe('session_not_found:session_bound_to_other_principal');
  });

  it('through the decision listener: the first caller presenting an unbound id claims it; anyone else → 404', async () => {
    expect(await verdict(() => checkSession(withSession('/bound/mcp', 'listener-1', 'alice', 'listener')))).toBe('passed');
    expect(await verdict(() => checkSession(withSession('/bound/mcp', 'listener-1', 'bob', 'listener')))).toBe('session_not_found:session_bound_to_other_principal');
  });
});
