import { describe, expect, it } from 'vitest';
import { bearerTokenProblem } from '../../../src/client/bearer-token.js';
import { browserCommand } from '../../../src/client/browser.js';
import { parseTimeout } from '../../../src/client/command-line.js';
import { Redactor } from '../../../src/client/redaction.js';
import { renderJson, renderTable } from '../../../src/client/report.js';

describe('--timeout', () => {
  it.each([
    [undefined, 10_000],
    ['10s', 10_000],
    ['500ms', 500],
    ['2m', 120_000],
    ['3', 3_000],
    ['0.5', 500],
  ])('%s → %i ms', (value, ms) => {
    expect(parseTimeout(value, 10_000)).toBe(ms);
  });

  it.each(['0', '0s', 'soon', '-1', '10 s'])('%s is refused', (value) => {
    expect(() => parseTimeout(value, 10_000)).toThrow('is not a duration');
  });
});

describe('G1: bearer token syntax (RFC 6750 §2.1 b64token), checked before a token is used', () => {
  it.each([['abc.DEF-ghi_jkl~mno+pqr/stu=='], ['eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'], ['a']])('%s is one', (token) => {
    expect(bearerTokenProblem(token)).toBeUndefined();
  });

  it.each([
    ['', 'it is empty'],
    ['part-one\npart-two', 'it spans more than one line'],
    ['part-one\r\n', 'it spans more than one line'],
    ['two words', 'it contains whitespace'],
    ['tab\there', 'it contains whitespace'],
    ['quote"d', 'outside RFC 6750 b64token syntax'],
    ['a=b', 'outside RFC 6750 b64token syntax'],
    ['ünïcode', 'outside RFC 6750 b64token syntax'],
  ])('%j is not: %s, without quoting it', (token, problem) => {
    expect(bearerTokenProblem(token)).toContain(problem);
    if (token.length > 1) expect(bearerTokenProblem(token)).not.toContain(token);
  });
});

describe('browser command', () => {
  it.each<[NodeJS.ProcessEnv, NodeJS.Platform, string[] | undefined]>([
    [{ BROWSER: 'firefox --new-window' }, 'linux', ['firefox', '--new-window']],
    [{ BROWSER: '  ' }, 'linux', ['xdg-open']],
    [{}, 'linux', ['xdg-open']],
    [{}, 'darwin', ['open']],
    [{}, 'win32', undefined],
  ])('%j on %s', (env, platform, command) => {
    expect(browserCommand(env, platform)).toEqual(command);
  });
});

describe('redactor', () => {
  it('replaces every secret it was given, also URL-encoded; ignores very short and undefined ones', () => {
    const redactor = new Redactor();
    redactor.add('s3cr3t/value');
    redactor.add('abc');
    redactor.add(undefined);
    expect(redactor.apply('a s3cr3t/value b s3cr3t%2Fvalue c abc')).toBe('a [redacted] b [redacted] c abc');
  });
});

describe('report rendering', () => {
  const report = {
    url: 'https://gw.example.com/mcp',
    checks: [
      { id: 'a', status: 'pass', message: 'fine', spec: 'RFC 1' },
      { id: 'longer-id', status: 'warn', message: 'from the server: \u001b[31mred\u0007', spec: 'RFC 2' },
      { id: 'b', status: 'fail', message: 'broken', spec: 'RFC 3' },
    ],
  } as const;

  it('one line per check with the clause beside it, control characters neutralised, then the totals', () => {
    expect(renderTable(report, new Redactor())).toBe(
      [
        'probe https://gw.example.com/mcp',
        'PASS  a          fine  [RFC 1]',
        'WARN  longer-id  from the server: ?[31mred?  [RFC 2]',
        'FAIL  b          broken  [RFC 3]',
        '1 passed, 1 warning(s), 1 failed',
        '',
      ].join('\n'),
    );
  });

  it('--json: { url, checks: [{ id, status, message, spec }] }', () => {
    expect(JSON.parse(renderJson(report, new Redactor()))).toEqual(report);
  });

  it('G1: redacts the raw messages before the table or JSON escapes them (a secret with a line break and a quote)', () => {
    const secret = 'SECRET-one\nSECRET-"two"';
    const redactor = new Redactor();
    redactor.add(secret);
    const leaky = { url: report.url, checks: [{ id: 'a', status: 'fail', message: `the server echoed ${secret}`, spec: 'RFC 1' }] } as const;
    for (const output of [renderTable(leaky, redactor), renderJson(leaky, redactor)]) {
      expect(output).toContain('the server echoed [redacted]');
      expect(output).not.toContain('SECRET');
    }
  });
});
