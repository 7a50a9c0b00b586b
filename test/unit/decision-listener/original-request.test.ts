import { describe, expect, it } from 'vitest';
import type { RequestFacts } from '../../../src/decision/facts.js';
import { originalRequest } from '../../../src/decision-listener/original-request.js';

const received = (url: string, headers: Record<string, string>, method = 'GET'): RequestFacts => ({
  method,
  url,
  headers: { host: 'decision.local', ...headers },
  rawHeaders: Object.entries(headers).flat(),
  clientAddress: '10.0.0.9',
});

describe('originalRequest', () => {
  it('nginx: X-Original-URI and X-Original-Method describe the request; X-Real-IP is the client', () => {
    const original = originalRequest(received('/_mcp_decision', { 'x-original-uri': '/calc/mcp?x=1', 'x-original-method': 'post', 'x-real-ip': '203.0.113.7' }), '');
    expect(original).toMatchObject({ kind: 'request', dialect: 'nginx', facts: { method: 'POST', url: '/calc/mcp?x=1', clientAddress: '203.0.113.7' } });
  });

  it('Traefik: X-Forwarded-Uri/-Method/-Host; the client is the last X-Forwarded-For hop', () => {
    const original = originalRequest(
      received('/', { 'x-forwarded-uri': '/calc/mcp', 'x-forwarded-method': 'GET', 'x-forwarded-host': 'mcp.example.com', 'x-forwarded-for': '198.51.100.1, 203.0.113.9' }),
      '',
    );
    expect(original).toMatchObject({ kind: 'request', dialect: 'traefik', facts: { url: '/calc/mcp', clientAddress: '203.0.113.9', headers: { host: 'mcp.example.com' } } });
  });

  it('Envoy: the request itself under path_prefix, its own method', () => {
    expect(originalRequest(received('/ext-authz/calc/mcp', {}, 'DELETE'), '/ext-authz')).toMatchObject({
      kind: 'request',
      dialect: 'envoy',
      facts: { method: 'DELETE', url: '/calc/mcp', clientAddress: '10.0.0.9' },
    });
  });

  it.each<[string, RequestFacts, string]>([
    ['nginx without X-Original-Method', received('/', { 'x-original-uri': '/calc/mcp' }), 'X-Original-Method'],
    ['Traefik without X-Forwarded-Method', received('/', { 'x-forwarded-uri': '/calc/mcp' }), 'X-Forwarded-Method'],
    ['a URI that is not origin-form', received('/', { 'x-original-uri': 'http://evil/calc/mcp', 'x-original-method': 'GET' }), 'an origin-form URI in the X-Original-URI header'],
    ['Envoy outside path_prefix', received('/calc/mcp', {}), 'a path under path_prefix "/ext-authz"'],
    ['Envoy on a look-alike prefix', received('/ext-authzz/calc/mcp', {}), 'a path under path_prefix "/ext-authz"'],
  ])('%s → unusable (never decided as something else)', (_name, request, missing) => {
    expect(originalRequest(request, '/ext-authz')).toMatchObject({ kind: 'unusable', missing });
  });
});
