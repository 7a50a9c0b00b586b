import { describe, expect, it } from 'vitest';
import { compiled, configWith, parseObject, problems } from './fixtures.js';

describe('routes[].dpop', () => {
  it('defaults to bearer_only (the behaviour before DPoP), ES256 first, a 60 s window, no nonce', () => {
    const [route] = compiled(parseObject(configWith({}))).routes;
    expect(route?.dpop).toEqual({ mode: 'bearer_only', algorithms: ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'], iatWindow: 60_000, requireNonce: false, nonceLifetime: 300_000 });
  });

  it('compiles a route that requires DPoP with nonces', () => {
    const [route] = compiled(parseObject(configWith({ 'routes.0.dpop': { mode: 'required', algorithms: ['ES256'], iat_window: '5m', require_nonce: true } }))).routes;
    expect(route?.dpop).toMatchObject({ mode: 'required', algorithms: ['ES256'], iatWindow: 300_000, requireNonce: true });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown mode', { 'routes.0.dpop.mode': 'optional' }, 'routes.0.dpop.mode'],
    ['a symmetric algorithm', { 'routes.0.dpop.algorithms': ['HS256'] }, 'routes.0.dpop.algorithms.0'],
    ['none', { 'routes.0.dpop.algorithms': ['none'] }, 'routes.0.dpop.algorithms.0'],
    ['an iat window over the draft\'s 5 minutes', { 'routes.0.dpop.iat_window': '10m' }, 'routes.0.dpop.iat_window'],
    ['an unknown key', { 'routes.0.dpop.bogus': 1 }, 'routes.0.dpop.bogus'],
    ['DPoP among the headers forwarded upstream', { 'routes.0.upstream.forward_headers': ['DPoP'] }, 'routes.0.upstream.forward_headers.0'],
  ])('refuses %s, naming its YAML path', (_name, edits, path) => {
    expect(problems(parseObject(configWith(edits))).map((problem) => problem.path)).toEqual([path]);
  });
});
