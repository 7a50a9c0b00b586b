import { describe, expect, it } from 'vitest';
import { bearerChallenge, parseWwwAuthenticate, type Challenge } from '../../../src/client/www-authenticate.js';

function parsed(value: string): readonly Challenge[] {
  const result = parseWwwAuthenticate(value);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(value)} to parse: ${result.error}`);
  return result.challenges;
}

/** Each challenge as `[scheme, params as an object, token68]` for compact tables. */
function shape(value: string): [string, Record<string, string>, string | undefined][] {
  return parsed(value).map((challenge) => [challenge.scheme, Object.fromEntries(challenge.params), challenge.token68]);
}

describe('parseWwwAuthenticate (RFC 9110 §11.6.1)', () => {
  it.each<[string, string, [string, Record<string, string>, string | undefined][]]>([
    ['a bare scheme', 'Bearer', [['Bearer', {}, undefined]]],
    [
      'quoted values',
      'Bearer resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"',
      [['Bearer', { resource_metadata: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp', scope: 'mcp:tools' }, undefined]],
    ],
    ['token values', 'Bearer error=invalid_token, scope=openid', [['Bearer', { error: 'invalid_token', scope: 'openid' }, undefined]]],
    ['commas and spaces inside quotes', 'Bearer scope="a b, c", realm="x,y"', [['Bearer', { scope: 'a b, c', realm: 'x,y' }, undefined]]],
    ['escaped quote and backslash', 'Bearer error_description="say \\"hi\\" \\\\ bye"', [['Bearer', { error_description: 'say "hi" \\ bye' }, undefined]]],
    ['an escaped ordinary character stands for itself', 'Bearer realm="\\a\\b"', [['Bearer', { realm: 'ab' }, undefined]]],
    ['an empty quoted value', 'Bearer realm=""', [['Bearer', { realm: '' }, undefined]]],
    ['parameter names are case-insensitive', 'Bearer Scope="a", RESOURCE_METADATA="https://x/"', [['Bearer', { scope: 'a', resource_metadata: 'https://x/' }, undefined]]],
    ['whitespace around "=" (BWS) and commas (OWS)', 'Bearer  scope = "a" ,\terror=x', [['Bearer', { scope: 'a', error: 'x' }, undefined]]],
    ['empty list elements are ignored', ', Bearer scope="a", , error="x",', [['Bearer', { scope: 'a', error: 'x' }, undefined]]],
    ['a token68 challenge', 'Basic YWxhZGRpbjpvcGVuc2VzYW1l', [['Basic', {}, 'YWxhZGRpbjpvcGVuc2VzYW1l']]],
    ['a token68 with "=" padding', 'Negotiate abc+/==', [['Negotiate', {}, 'abc+/==']]],
    ['a token68 of one "=" after a name-like token', 'Foo abc=', [['Foo', {}, 'abc=']]],
    [
      'several challenges (RFC 9110 example)',
      'Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"',
      [
        ['Newauth', { realm: 'apps', type: '1', title: 'Login to "apps"' }, undefined],
        ['Basic', { realm: 'simple' }, undefined],
      ],
    ],
    [
      'a token68 challenge before a Bearer one (two header lines joined)',
      'Basic abc==, Bearer scope="mcp:tools"',
      [
        ['Basic', {}, 'abc=='],
        ['Bearer', { scope: 'mcp:tools' }, undefined],
      ],
    ],
    ['a bare scheme between challenges', 'Basic, Bearer error="x"', [['Basic', {}, undefined], ['Bearer', { error: 'x' }, undefined]]],
  ])('parses %s', (_name, value, expected) => {
    expect(shape(value)).toEqual(expected);
  });

  it.each([
    ['a repeated name', 'Bearer scope="a", scope="b"', ['scope']],
    ['a repeated name in another case', 'Bearer error="a", ERROR="b", realm=x, Realm=y', ['error', 'realm']],
  ])('detects duplicates: %s (the first value is kept)', (_name, value, duplicates) => {
    const [challenge] = parsed(value);
    expect(challenge?.duplicateParams).toEqual(duplicates);
    expect(challenge?.params.get(duplicates[0] ?? '')).toBe('a');
  });

  it.each([
    ['an empty header', '', 'no challenge'],
    ['only commas', ' , ,', 'no challenge'],
    ['an unterminated quoted-string', 'Bearer scope="a, error=x', 'unterminated quoted-string at character 25'],
    ['a token value with a character tokens do not allow', 'Bearer scope=mcp:tools', 'expected "," after an auth-param at character 17'],
    ['a control character inside quotes', 'Bearer scope="a\u0001b"', 'control character in quoted-string at character 16'],
    ['a dangling escape', 'Bearer scope="a\\', 'invalid escape'],
    ['no space after the scheme', 'Bearer"x"', 'expected a space after the auth-scheme'],
    ['a value followed by junk', 'Bearer scope="a"b', 'expected "," after an auth-param'],
    ['a parameter without a value before another (read as token68 "scope=")', 'Bearer scope=, error="x"', 'expected a space after the auth-scheme'],
    ['a quoted string in scheme position', '"Bearer" scope="a"', 'expected an auth-scheme at character 1'],
    ['a token68 followed by a parameter', 'Basic abc== realm="x"', 'expected a token68 or an auth-param'],
  ])('rejects %s', (_name, value, error) => {
    const result = parseWwwAuthenticate(value);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toContain(error);
  });
});

describe('bearerChallenge', () => {
  it.each([
    ['Bearer scope="a"', 'a'],
    ['bearer scope="a"', 'a'],
    ['BEARER scope="a"', 'a'],
    ['Basic realm="x", Bearer scope="a"', 'a'],
  ])('finds the Bearer challenge in %s (scheme case-insensitive)', (value, scope) => {
    expect(bearerChallenge(parsed(value))?.params.get('scope')).toBe(scope);
  });

  it('is undefined without a Bearer challenge', () => {
    expect(bearerChallenge(parsed('Basic realm="x", DPoP algs="ES256"'))).toBeUndefined();
  });
});
