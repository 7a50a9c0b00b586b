import { describe, expect, it } from 'vitest';
import { extractAccessToken, hasAccessTokenInQuery } from '../../../src/decision/bearer-token.js';

const MAX = 64;
const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln';

function withAuthorization(...values: string[]): string[] {
  return ['Host', 'gw.example.com', ...values.flatMap((value) => ['Authorization', value]), 'Accept', '*/*'];
}

describe('extractAccessToken', () => {
  it('returns the token of a well-formed Bearer header', () => {
    expect(extractAccessToken(withAuthorization(`Bearer ${TOKEN}`), MAX)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
  });

  it('A1 no Authorization header → missing', () => {
    expect(extractAccessToken(['Host', 'gw.example.com'], MAX)).toEqual({ kind: 'missing' });
    expect(extractAccessToken([], MAX)).toEqual({ kind: 'missing' });
  });

  it.each([
    ['Basic dXNlcjpwYXNz'],
    ['Digest username="a", realm="b"'],
    ['Negotiate YIIabc'],
    ['Bearerabc'],
    ['Token abc'],
    [''],
  ])('A2 unsupported scheme %j → missing (401 without error)', (value) => {
    expect(extractAccessToken(withAuthorization(value), MAX)).toEqual({ kind: 'missing' });
  });

  it.each([['bearer'], ['BEARER'], ['Bearer'], ['bEaReR']])('A3 scheme %s is case-insensitive', (scheme) => {
    expect(extractAccessToken(withAuthorization(`${scheme} ${TOKEN}`), MAX)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
  });

  it.each([['DPoP'], ['dpop'], ['DPOP']])('RFC 9449 §7.1 scheme %s is read as a DPoP credential', (scheme) => {
    expect(extractAccessToken(withAuthorization(`${scheme} ${TOKEN}`), MAX)).toEqual({ kind: 'token', token: TOKEN, scheme: 'dpop' });
  });

  it('A3 header name is matched case-insensitively in rawHeaders', () => {
    expect(extractAccessToken(['authorization', `Bearer ${TOKEN}`], MAX)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
    expect(extractAccessToken(['AUTHORIZATION', `Bearer ${TOKEN}`], MAX)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
  });

  it.each([
    ['Bearer', 'no token'],
    ['Bearer    ', 'only spaces'],
    ['Bearer a b', 'two tokens'],
    ['Bearer a,Bearer b', 'comma-joined credentials'],
    ['Bearer a, b', 'comma list'],
    ['Bearer "abc"', 'quoted token'],
    ['Bearer abc%20def', 'percent'],
    ['Bearer abc,', 'trailing comma'],
    ['Bearer abc\u0000', 'NUL'],
    ['Bearer ab\u0007c', 'BEL (CTL)'],
    ['Bearer ab\u007fc', 'DEL'],
    ['Bearer ab\r\nc', 'CRLF'],
    ['Bearer tökén', 'non-ASCII'],
    ['Bearer abc\u00a0', 'NBSP'],
    ['Bearer\tabc', 'tab separator'],
    ['Bearer abc def=', 'space then padding'],
    ['Bearer a;b', 'semicolon'],
    ['Bearer token="abc"', 'auth-param with a quoted value'],
  ])('A4 %j (%s) → invalid_request', (value) => {
    expect(extractAccessToken(withAuthorization(value), MAX)).toEqual({ kind: 'invalid_request' });
  });

  it.each([
    ['Bearer  abc', 'abc'],
    ['Bearer abc==', 'abc=='],
    ['Bearer a-b.c_d~e+f/g', 'a-b.c_d~e+f/g'],
    ['  Bearer abc \t', 'abc'],
  ])('A4 grammar: %j is accepted as %j (1*SP, token68 padding, outer OWS ignored)', (value, token) => {
    expect(extractAccessToken(withAuthorization(value), MAX)).toEqual({ kind: 'token', token, scheme: 'bearer' });
  });

  it.each([
    ['Bearer =abc', '=abc'],
    ['Bearer ab=c', 'ab=c'],
    ['Bearer eyJhbGciOiJFUzI1NiJ9==.eyJzdWIiOiJhIn0=.c2ln', 'eyJhbGciOiJFUzI1NiJ9==.eyJzdWIiOiJhIn0=.c2ln'],
    ['Bearer token=abc', 'token=abc'],
  ])('K16 %j: `=` out of place is the token\'s form, not the header\'s: extracted as %j for the verifier to refuse', (value, token) => {
    expect(extractAccessToken(withAuthorization(value), MAX)).toEqual({ kind: 'token', token, scheme: 'bearer' });
  });

  it.each([
    [[`Bearer ${TOKEN}`, `Bearer ${TOKEN}`], 'two identical valid'],
    [[`Bearer ${TOKEN}`, 'Bearer other'], 'two different valid'],
    [[`Bearer ${TOKEN}`, 'Bearer "bad"'], 'valid and invalid'],
    [['Basic dXNlcjpwYXNz', `Bearer ${TOKEN}`], 'basic and bearer'],
    [['', `Bearer ${TOKEN}`], 'empty and bearer'],
  ])('A7 two Authorization lines (%j, %s) → invalid_request', (values) => {
    expect(extractAccessToken(withAuthorization(...values), MAX)).toEqual({ kind: 'invalid_request' });
  });

  it('A7 a duplicate in a different case of the header name still counts', () => {
    const raw = ['Authorization', `Bearer ${TOKEN}`, 'authorization', `Bearer ${TOKEN}`];
    expect(extractAccessToken(raw, MAX)).toEqual({ kind: 'invalid_request' });
  });

  it('A8 token longer than the cap → too_long, one byte under or at the cap → token', () => {
    expect(extractAccessToken(withAuthorization(`Bearer ${'a'.repeat(MAX + 1)}`), MAX)).toEqual({ kind: 'too_long' });
    expect(extractAccessToken(withAuthorization(`Bearer ${'a'.repeat(MAX)}`), MAX)).toEqual({
      kind: 'token',
      token: 'a'.repeat(MAX),
      scheme: 'bearer',
    });
  });

  it('A8 a huge value with inner whitespace is rejected without quadratic scanning', () => {
    const value = `Bearer a${' '.repeat(200_000)}b`;
    expect(extractAccessToken(withAuthorization(value), 1_000_000)).toEqual({ kind: 'invalid_request' });
    expect(extractAccessToken(withAuthorization(`Bearer ${'a'.repeat(1_000_000)}`), 8192)).toEqual({ kind: 'too_long' });
  });
});

describe('extractAccessToken remembers the last value read on each connection', () => {
  const OTHER = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJiIn0.c2ln';
  const LIMIT = 8192;

  it('A7 a different value on the same connection is read anew: each neighbour gets its own verdict', () => {
    const connection = {};
    const read = (value: string) => extractAccessToken(withAuthorization(value), LIMIT, connection);
    expect(read(`Bearer ${TOKEN}`)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
    expect(read(`Bearer ${TOKEN}`)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
    expect(read(`Bearer ${TOKEN} x`)).toEqual({ kind: 'invalid_request' });
    expect(read(`Bearer ${TOKEN.slice(0, -1)}"`)).toEqual({ kind: 'invalid_request' });
    expect(read(`Bearer\t${TOKEN}`)).toEqual({ kind: 'invalid_request' });
    expect(read(`Basic ${TOKEN}`)).toEqual({ kind: 'missing' });
    expect(read(`Bearer ${OTHER}`)).toEqual({ kind: 'token', token: OTHER, scheme: 'bearer' });
    expect(read(`Bearer ${TOKEN}`)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
  });

  it('A7 a second Authorization line is refused on a connection whose value was read before', () => {
    const connection = {};
    expect(extractAccessToken(withAuthorization(`Bearer ${TOKEN}`), LIMIT, connection)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
    expect(extractAccessToken(withAuthorization(`Bearer ${TOKEN}`, `Bearer ${TOKEN}`), LIMIT, connection)).toEqual({ kind: 'invalid_request' });
    expect(extractAccessToken(withAuthorization(), LIMIT, connection)).toEqual({ kind: 'missing' });
  });

  it('A8 a value read under a higher limit is too_long once the limit is lowered (a reload)', () => {
    const connection = {};
    const value = `Bearer ${'a'.repeat(100)}`;
    expect(extractAccessToken(withAuthorization(value), LIMIT, connection)).toEqual({ kind: 'token', token: 'a'.repeat(100), scheme: 'bearer' });
    expect(extractAccessToken(withAuthorization(value), 99, connection)).toEqual({ kind: 'too_long' });
    expect(extractAccessToken(withAuthorization(value), LIMIT, connection)).toEqual({ kind: 'token', token: 'a'.repeat(100), scheme: 'bearer' });
  });

  it('one connection’s value is never another’s verdict', () => {
    const first = {};
    const second = {};
    expect(extractAccessToken(withAuthorization(`Bearer ${TOKEN}`), LIMIT, first)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
    expect(extractAccessToken(withAuthorization(`Bearer ${OTHER}`), LIMIT, second)).toEqual({ kind: 'token', token: OTHER, scheme: 'bearer' });
    expect(extractAccessToken(withAuthorization(`Bearer ${TOKEN}`), LIMIT, first)).toEqual({ kind: 'token', token: TOKEN, scheme: 'bearer' });
  });
});

describe('hasAccessTokenInQuery', () => {
  it.each([
    ['/mcp?access_token=abc', true],
    ['/mcp?a=1&access_token=', true],
    ['/mcp?access_token', true],
    ['/mcp?ACCESS_TOKEN=abc', true],
    ['/mcp?access%5Ftoken=abc', true],
    ['/mcp?x=1&Access_Token=abc#frag', true],
    ['/mcp', false],
    ['/mcp?', false],
    ['/mcp?token=abc', false],
    ['/mcp?access_token_hint=abc', false],
    ['/mcp#access_token=abc', false],
    ['/access_token?x=1', false],
  ])('A5/A6 %s → %s', (url, expected) => {
    expect(hasAccessTokenInQuery(url)).toBe(expected);
  });
});
