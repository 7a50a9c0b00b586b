import { describe, expect, it } from 'vitest';
import { callerToken } from '../../../../src/decision/state.js';
import { authenticate } from '../../../../src/decision/steps/token.js';
import { caller, facts, namedTokens, route, stateAt, stepRuntime, verdict } from '../../../helpers/decision.js';

const runtime = stepRuntime(route('calc', '    policy: { implies: { "calc:admin": [calc:write] } }'), {
  verifier: namedTokens({ good: caller('alice', ['mcp', 'calc:admin']) }),
});
const post = (headers: Record<string, string>, url = '/calc/mcp') => stateAt(runtime, facts('POST', url, headers));

describe('token step', () => {
  it('a verified token: the caller, its scopes with policy.implies applied, and its token kept for the exchange step', async () => {
    const state = post({ authorization: 'Bearer good' });
    expect(await verdict(() => authenticate(state))).toBe('passed');
    expect(state.auth?.subject).toBe('alice');
    expect([...state.scopes].sort()).toEqual(['calc:admin', 'calc:write', 'mcp']);
    expect(callerToken(state)).toBe('good');
  });

  it('a token verified before comes back at once, not as a promise', () => {
    expect(authenticate(post({ authorization: 'Bearer good' }))).toBeUndefined();
  });

  it.each<[string, Record<string, string>, string, string?]>([
    ['no Authorization', {}, 'missing_token'],
    ['a Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'missing_token'],
    ['a malformed header', { authorization: 'Bearer a b' }, 'invalid_request:malformed_authorization_header'],
    ['a token too long', { authorization: `Bearer ${'a'.repeat(9000)}` }, 'invalid_token:token_too_long'],
    ['an unknown token', { authorization: 'Bearer forged' }, 'invalid_token'],
    ['a verifier that cannot decide', { authorization: 'Bearer down' }, 'auth_unavailable'],
    ['a token in a form body', { authorization: 'Bearer good', 'content-type': 'application/x-www-form-urlencoded' }, 'invalid_request:token_outside_header'],
    ['a token in a cookie', { authorization: 'Bearer good', cookie: 'a=1; access_token=good' }, 'invalid_request:token_outside_header'],
    ['a token in the query', { authorization: 'Bearer good' }, 'invalid_request:token_outside_header', '/calc/mcp?access_token=good'],
  ])('%s → %s', async (_name, headers, expected, url) => {
    const state = post(headers, url);
    expect(await verdict(() => authenticate(state))).toBe(expected);
    expect(state.auth).toBeUndefined();
  });

  it('two Authorization lines (Node keeps only one in headers) → 400 invalid_request', async () => {
    const state = stateAt(runtime, { ...facts('POST', '/calc/mcp', { authorization: 'Bearer good' }), rawHeaders: ['Authorization', 'Bearer good', 'authorization', 'Bearer forged'] });
    expect(await verdict(() => authenticate(state))).toBe('invalid_request:malformed_authorization_header');
  });
});
