import { describe, expect, it } from 'vitest';
import { advertisedScopes, challengeScopes, namedScopes, routeChallenge } from '../../../src/decision/challenge.js';
import { errorResponse } from '../../../src/decision/responses.js';
import { GatewayError } from '../../../src/decision/refusal.js';
import { protectedResourceMetadata } from '../../../src/doors/public/metadata-document.js';
import { compiled, configWith, parseObject, problems } from '../config/fixtures.js';

/** An IdP that refuses any authorization request without `openid`, in front of the demo's calculator policy. */
const OPENID_IDP = {
  'routes.0.scopes_supported': ['mcp:tools', 'calc:write'],
  'routes.0.policy.scopes': ['mcp:tools'],
  'routes.0.policy.tools': { multiply: ['calc:write'] },
  'routes.0.policy.challenge_scopes': ['openid'],
};

function route(edits: Record<string, unknown>) {
  const first = compiled(parseObject(configWith(edits))).routes[0];
  if (first === undefined) throw new Error('no route');
  return first;
}

function challengeScope(header: string | undefined): string | undefined {
  return /scope="([^"]*)"/.exec(header ?? '')?.[1];
}

describe('policy.challenge_scopes: named in challenges, never required', () => {
  it('is empty by default and changes no challenge', () => {
    const plain = route({ ...OPENID_IDP, 'routes.0.policy.challenge_scopes': undefined });
    expect(plain.policy.challengeScopes).toEqual([]);
    expect(challengeScopes(plain)).toEqual(['mcp:tools']);
  });

  it('the 401 challenge names the route scopes, then the challenge scopes', () => {
    expect(challengeScopes(route(OPENID_IDP))).toEqual(['mcp:tools', 'openid']);
  });

  it('a 403 insufficient_scope names every scope the operation needs, then the challenge scopes', () => {
    const challenge = routeChallenge(route(OPENID_IDP));
    const response = errorResponse(new GatewayError('insufficient_scope', { requiredScopes: ['mcp:tools', 'calc:write'] }), challenge);
    expect(response.statusCode).toBe(403);
    // PRM scopes_supported is "mcp:tools calc:write openid": the same set, so the challenge names it in another order.
    expect(challengeScope(response.headers['www-authenticate'])).toBe('calc:write openid mcp:tools');
  });

  it('scopes_supported of the protected resource metadata lists them too', () => {
    expect(protectedResourceMetadata(route(OPENID_IDP)).scopes_supported).toEqual(['mcp:tools', 'calc:write', 'openid']);
  });

  it('a challenge scope the route already names appears once', () => {
    expect(challengeScopes(route({ ...OPENID_IDP, 'routes.0.policy.challenge_scopes': ['mcp:tools', 'openid', 'openid'] }))).toEqual([
      'mcp:tools',
      'openid',
    ]);
  });

  it('refuses offline_access and malformed scopes, with their YAML path', () => {
    expect(problems(parseObject(configWith({ 'routes.0.policy.challenge_scopes': ['offline_access', 'a b'] })))).toEqual([
      { path: 'routes.0.policy.challenge_scopes.0', message: 'offline_access must not be asked for by a protected resource' },
      { path: 'routes.0.policy.challenge_scopes.1', message: 'must be an RFC 6749 scope token: visible ASCII without space, " or \\' },
    ]);
  });
});

describe('a challenge scope never equals scopes_supported joined (a known client then drops it for its own default)', () => {
  it('the step-up union equal to scopes_supported: the 403 names the same scopes in another order', () => {
    const demo = route({ ...OPENID_IDP, 'routes.0.policy.challenge_scopes': undefined });
    expect(advertisedScopes(demo)).toEqual(['mcp:tools', 'calc:write']);
    const response = errorResponse(new GatewayError('insufficient_scope', { requiredScopes: ['mcp:tools', 'calc:write'] }), routeChallenge(demo));
    const scope = challengeScope(response.headers['www-authenticate']);
    expect(scope).not.toBe(advertisedScopes(demo).join(' '));
    expect(scope?.split(' ').sort()).toEqual(['calc:write', 'mcp:tools']);
  });

  it('upfront_scopes: the 401 naming every scope of scopes_supported names them in another order', () => {
    const upfront = route({ ...OPENID_IDP, 'routes.0.policy.challenge_scopes': undefined, 'routes.0.policy.upfront_scopes': true });
    expect(challengeScopes(upfront).join(' ')).not.toBe(advertisedScopes(upfront).join(' '));
    expect(challengeScopes(upfront)).toEqual(['calc:write', 'mcp:tools']);
  });

  it.each<[string, string[], string[], string[]]>([
    ['a subset keeps its order', ['mcp:tools'], [], ['mcp:tools', 'calc:write']],
    ['another order already differs', ['calc:write', 'mcp:tools'], [], ['mcp:tools', 'calc:write']],
    ['a superset keeps its order', ['mcp:tools', 'calc:write', 'x'], [], ['mcp:tools', 'calc:write']],
    ['a single scope equal to scopes_supported cannot differ (and that client then asks for it anyway)', ['mcp:tools'], [], ['mcp:tools']],
  ])('namedScopes: %s', (_case, needed, alsoNamed, advertised) => {
    expect(namedScopes(needed, alsoNamed, advertised)).toEqual(needed);
  });

  it('namedScopes: equal to scopes_supported joined → the first scope moves last', () => {
    expect(namedScopes(['a', 'b', 'c'], [], ['a', 'b', 'c'])).toEqual(['b', 'c', 'a']);
    expect(namedScopes(['a', 'b'], ['c'], ['a', 'b', 'c'])).toEqual(['b', 'c', 'a']);
  });
});
