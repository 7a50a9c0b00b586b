import { describe, expect, it } from 'vitest';
import { compileTrustedProxies } from '../../../../src/config/trusted-proxies.js';
import type { DecisionProxy } from '../../../../src/config/types.js';
import type { RequestFacts } from '../../../../src/decision/facts.js';
import { originalRequest } from '../../../../src/doors/decision-listener/original-request.js';

/** The proxy's own address, as the listener's socket sees it. */
const PROXY = '10.0.0.9';

const received = (url: string, headers: Record<string, string>, method = 'GET'): RequestFacts => {
  const all = { host: 'decision.local', ...headers };
  return { method, url, headers: all, rawHeaders: Object.entries(all).flat(), host: all.host, clientAddress: PROXY };
};

const settings = (proxy: DecisionProxy, trusted: string[] = []) => ({ proxy, pathPrefix: '/ext-authz', trustedProxies: compileTrustedProxies(trusted) });

describe('originalRequest: the configured proxy\'s description, and only that', () => {
  it('nginx: X-Original-URI and X-Original-Method describe the request; the Host it set is the client\'s', () => {
    const original = originalRequest(received('/_mcp_decision', { host: 'mcp.example.com', 'x-original-uri': '/calc/mcp?x=1', 'x-original-method': 'post' }), settings('nginx'));
    expect(original).toMatchObject({ kind: 'request', facts: { method: 'POST', url: '/calc/mcp?x=1', host: 'mcp.example.com', clientAddress: PROXY } });
  });

  it('Traefik, trusted: X-Forwarded-Uri/-Method/-Host; the client is the X-Forwarded-For hop Traefik added', () => {
    const original = originalRequest(
      received('/', { 'x-forwarded-uri': '/calc/mcp', 'x-forwarded-method': 'GET', 'x-forwarded-host': 'mcp.example.com', 'x-forwarded-for': '198.51.100.1, 203.0.113.9' }),
      settings('traefik', ['10.0.0.0/24']),
    );
    expect(original).toMatchObject({ kind: 'request', facts: { url: '/calc/mcp', host: 'mcp.example.com', clientAddress: '203.0.113.9' } });
  });

  it('Envoy: the request itself under path_prefix, its own method', () => {
    expect(originalRequest(received('/ext-authz/calc/mcp', {}, 'DELETE'), settings('envoy'))).toMatchObject({
      kind: 'request',
      facts: { method: 'DELETE', url: '/calc/mcp', clientAddress: PROXY },
    });
  });

  // Traefik copies the client's headers into its forwardAuth question: a client-written nginx description must
  // never turn its POST tools/call into a GET that skips the tool policy.
  it.each<[DecisionProxy, Record<string, string>, string]>([
    ['traefik', { 'x-forwarded-uri': '/calc/mcp', 'x-forwarded-method': 'POST', 'x-original-uri': '/calc/mcp', 'x-original-method': 'GET' }, 'x-original-uri'],
    ['traefik', { 'x-forwarded-uri': '/calc/mcp', 'x-forwarded-method': 'POST', 'x-original-method': 'GET' }, 'x-original-method'],
    ['nginx', { 'x-original-uri': '/calc/mcp', 'x-original-method': 'POST', 'x-forwarded-method': 'GET' }, 'x-forwarded-method'],
    ['nginx', { 'x-original-uri': '/calc/mcp', 'x-original-method': 'POST', 'x-forwarded-uri': '/other/mcp' }, 'x-forwarded-uri'],
  ])('%s: a question that also carries another proxy\'s description (%j) is refused, never read', (proxy, headers, header) => {
    expect(originalRequest(received('/', headers, 'POST'), settings(proxy))).toEqual({ kind: 'conflicting', header });
  });

  it('Envoy: nginx or Traefik description headers in an Envoy question are refused, never read', () => {
    const question = received('/ext-authz/calc/mcp', { 'x-original-uri': '/calc/mcp', 'x-original-method': 'GET' }, 'POST');
    expect(originalRequest(question, settings('envoy'))).toEqual({ kind: 'conflicting', header: 'x-original-uri' });
    const traefikShaped = received('/ext-authz/calc/mcp', { 'x-forwarded-method': 'GET' }, 'POST');
    expect(originalRequest(traefikShaped, settings('envoy'))).toEqual({ kind: 'conflicting', header: 'x-forwarded-method' });
  });

  it('nginx never reads X-Forwarded-Uri / -Method even when nginx omits its own: incomplete, not guessed', () => {
    expect(originalRequest(received('/', { 'x-original-uri': '/calc/mcp' }), settings('nginx'))).toMatchObject({ kind: 'unusable' });
  });

  it.each<[string, RequestFacts, DecisionProxy, string]>([
    ['nginx without X-Original-Method', received('/', { 'x-original-uri': '/calc/mcp' }), 'nginx', 'the x-original-method header'],
    ['nginx without X-Original-URI', received('/', { 'x-original-method': 'GET' }), 'nginx', 'an origin-form URI in the x-original-uri header'],
    ['Traefik without X-Forwarded-Method', received('/', { 'x-forwarded-uri': '/calc/mcp' }), 'traefik', 'the x-forwarded-method header'],
    ['a URI that is not origin-form', received('/', { 'x-original-uri': 'http://evil/calc/mcp', 'x-original-method': 'GET' }), 'nginx', 'an origin-form URI in the x-original-uri header'],
    ['Envoy outside path_prefix', received('/calc/mcp', {}), 'envoy', 'a path under path_prefix "/ext-authz"'],
    ['Envoy on a look-alike prefix', received('/ext-authzz/calc/mcp', {}), 'envoy', 'a path under path_prefix "/ext-authz"'],
  ])('%s → unusable (never decided as something else)', (_name, request, proxy, missing) => {
    expect(originalRequest(request, settings(proxy))).toEqual({ kind: 'unusable', missing });
  });
});

describe('originalRequest: Host and client address only from trusted proxies', () => {
  const spoofed = { host: 'gw.example.com', 'x-original-uri': '/calc/mcp', 'x-original-method': 'GET', 'x-forwarded-host': 'localhost', 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1' };

  it('an untrusted proxy passes the client\'s X-Forwarded-Host / -For / X-Real-IP on: none of them count', () => {
    expect(originalRequest(received('/', spoofed), settings('nginx'))).toMatchObject({ kind: 'request', facts: { host: 'gw.example.com', clientAddress: PROXY } });
  });

  it('Envoy untrusted: its own Host and address', () => {
    const question = received('/ext-authz/calc/mcp', { host: 'gw.example.com', 'x-forwarded-host': 'localhost', 'x-forwarded-for': '127.0.0.1' });
    expect(originalRequest(question, settings('envoy'))).toMatchObject({ kind: 'request', facts: { host: 'gw.example.com', clientAddress: PROXY } });
  });

  it('a trusted proxy that overwrites them is believed', () => {
    const question = received('/', { ...spoofed, 'x-forwarded-host': 'mcp.example.com', 'x-forwarded-for': '192.0.2.44' });
    expect(originalRequest(question, settings('nginx', [PROXY]))).toMatchObject({ kind: 'request', facts: { host: 'mcp.example.com', clientAddress: '192.0.2.44' } });
  });
});
