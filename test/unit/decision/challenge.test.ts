import { describe, expect, it } from 'vitest';
import { buildChallenge, CHALLENGE_DESCRIPTIONS } from '../../../src/decision/challenge.js';
import type { ChallengeError } from '../../../src/decision/challenge.js';

const PRM = 'https://gw.example.com/.well-known/oauth-protected-resource/calc/mcp';

/** Strict RFC 9110 §11 challenge parser: `Bearer` then comma-separated `name="quoted"` auth-params, nothing else. */
function parseChallenge(header: string): { scheme: string; params: [string, string][] } {
  const match = /^(\S+) (.*)$/s.exec(header);
  if (!match) throw new Error('no scheme');
  const [, scheme = '', rest = ''] = match;
  const params: [string, string][] = [];
  const param = /^([a-z_]+)="((?:[^"\\]|\\.)*)"(?:, |$)/;
  let remaining = rest;
  while (remaining !== '') {
    const found = param.exec(remaining);
    if (!found) throw new Error(`unparseable auth-params: ${remaining}`);
    params.push([found[1] ?? '', found[2] ?? '']);
    remaining = remaining.slice(found[0].length);
  }
  return { scheme, params };
}

const ALLOWED_VALUE = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/;

describe('buildChallenge', () => {
  it('E1 no-error 401: resource_metadata and scope only', () => {
    const header = buildChallenge({ resourceMetadataUrl: PRM, scopes: ['mcp:tools', 'calc:read'] });
    expect(header).toBe(`Bearer resource_metadata="${PRM}", scope="mcp:tools calc:read"`);
  });

  it('E1 invalid_token: error first, fixed description, resource_metadata, scope', () => {
    const header = buildChallenge({ error: 'invalid_token', resourceMetadataUrl: PRM, scopes: ['mcp:tools'] });
    expect(parseChallenge(header)).toEqual({
      scheme: 'Bearer',
      params: [
        ['error', 'invalid_token'],
        ['error_description', CHALLENGE_DESCRIPTIONS.invalid_token],
        ['resource_metadata', PRM],
        ['scope', 'mcp:tools'],
      ],
    });
  });

  it('E1 scope is omitted when empty or absent', () => {
    expect(buildChallenge({ error: 'invalid_request', resourceMetadataUrl: PRM, scopes: [] })).not.toContain('scope=');
    expect(buildChallenge({ resourceMetadataUrl: PRM })).toBe(`Bearer resource_metadata="${PRM}"`);
  });

  it.each<[ChallengeError | undefined, readonly string[]]>([
    [undefined, ['a']],
    ['invalid_request', []],
    ['invalid_token', ['mcp:tools']],
    ['insufficient_scope', ['mcp:tools', 'calc:write']],
  ])('E1 %s: scheme Bearer, each auth-param once, values quoted and within the RFC 6750 charset', (error, scopes) => {
    const { scheme, params } = parseChallenge(
      buildChallenge({ ...(error ? { error } : {}), resourceMetadataUrl: PRM, scopes }),
    );
    expect(scheme).toBe('Bearer');
    const names = params.map(([name]) => name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('resource_metadata');
    expect(new URL(params.find(([name]) => name === 'resource_metadata')?.[1] ?? '').protocol).toBe('https:');
    for (const [, value] of params) expect(value).toMatch(ALLOWED_VALUE);
  });

  it('E2 every error_description is a fixed string within %x20-21/%x23-5B/%x5D-7E', () => {
    for (const description of Object.values(CHALLENGE_DESCRIPTIONS)) expect(description).toMatch(ALLOWED_VALUE);
  });

  it.each([
    ['a"b'],
    ['a\\b'],
    ['a b'],
    [''],
    ['caf\u00e9'],
    ['a\r\nWWW-Authenticate: x'],
    ['a\u0000'],
  ])('E3 scope %j that cannot be a quoted scope-token → throws', (scope) => {
    expect(() => buildChallenge({ error: 'invalid_token', resourceMetadataUrl: PRM, scopes: [scope] })).toThrow();
  });

  it.each([['https://gw.example.com/"x'], ['https://gw.example.com/\\x'], ['https://gw.example.com/\nx']])(
    'E3 resource_metadata %j that cannot be quoted → throws',
    (url) => {
      expect(() => buildChallenge({ resourceMetadataUrl: url })).toThrow();
    },
  );
});
