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

describe('token step: DPoP schemes per dpop.mode (RFC 9449 §7)', () => {
  const bound = { ...caller(), boundKey: 'A'.repeat(43) };
  const tokens = namedTokens({ good: caller(), bound });
  const dpopRuntime = stepRuntime(
    [route('plain'), route('accepted', '    dpop: { mode: accepted }'), route('required', '    dpop: { mode: required }')].join('\n'),
    { verifier: tokens },
  );
  const at = (path: string, headers: Record<string, string>) => stateAt(dpopRuntime, facts('POST', `/${path}/mcp`, headers));

  it.each<[string, string, Record<string, string>, string]>([
    ['bearer_only: an unbound Bearer token', 'plain', { authorization: 'Bearer good' }, 'passed'],
    ['bearer_only: the DPoP scheme counts as no token', 'plain', { authorization: 'DPoP bound' }, 'missing_token:dpop_scheme_not_accepted'],
    ['bearer_only: a bound token as Bearer', 'plain', { authorization: 'Bearer bound' }, 'invalid_token:sender_constrained'],
    ['accepted: an unbound Bearer token', 'accepted', { authorization: 'Bearer good' }, 'passed'],
    ['accepted: a bound token as Bearer', 'accepted', { authorization: 'Bearer bound' }, 'invalid_token:sender_constrained'],
    ['accepted: an unbound token as DPoP', 'accepted', { authorization: 'DPoP good', dpop: 'x.y.z' }, 'invalid_token:not_dpop_bound'],
    ['accepted: a bound token without a proof', 'accepted', { authorization: 'DPoP bound' }, 'invalid_dpop_proof:proof_missing'],
    ['accepted: a bound token with a malformed proof', 'accepted', { authorization: 'DPoP bound', dpop: 'garbage' }, 'invalid_dpop_proof:not_compact_jws'],
    ['required: the Bearer scheme counts as no token', 'required', { authorization: 'Bearer good' }, 'missing_token:bearer_scheme_not_accepted'],
  ])('%s → %s', async (_name, path, headers, expected) => {
    expect(await verdict(() => authenticate(at(path, headers)))).toBe(expected);
  });

  it('two DPoP lines → invalid_dpop_proof (RFC 9449 §4.3 check 1)', async () => {
    const state = stateAt(dpopRuntime, { ...facts('POST', '/accepted/mcp', { authorization: 'DPoP bound' }), rawHeaders: ['authorization', 'DPoP bound', 'DPoP', 'a.b.c', 'dpop', 'a.b.c'] });
    expect(await verdict(() => authenticate(state))).toBe('invalid_dpop_proof:proof_repeated');
  });
});
