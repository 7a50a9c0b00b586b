import { describe, expect, it } from 'vitest';
import { compileTrustedProxies, trustedProxyProblem } from '../../../src/config/trusted-proxies.js';
import { clientOrigin } from '../../../src/doors/shared/forwarded.js';

const INGRESS = '10.1.0.5';
const trusting = (...entries: string[]) => compileTrustedProxies(entries);

describe('trusted_proxies entries', () => {
  it.each(['10.0.0.0/8', '192.0.2.7', 'fd00::/8', '::1', '2001:db8::/32', '0.0.0.0/0'])('%s is accepted', (entry) => {
    expect(trustedProxyProblem(entry)).toBeUndefined();
  });

  it.each(['10.0.0.0/33', '::/129', 'ingress.local', '10.0.0.0/', '/8', '10.0.0.0/8/1', '10.0.0', '', ' 10.0.0.1'])('%j is refused', (entry) => {
    expect(trustedProxyProblem(entry)).toBeDefined();
  });

  it('matches IPv4 blocks, IPv6 blocks, and IPv4-mapped IPv6 peers against IPv4 blocks', () => {
    const trusted = trusting('10.1.0.0/16', 'fd00::/8');
    expect(['10.1.255.1', '::ffff:10.1.0.5', 'fd12::1', 'FD00::2'].map((address) => trusted.trusts(address))).toEqual([true, true, true, true]);
    expect(['10.2.0.1', '::ffff:10.2.0.1', 'fe80::1', 'garbage', undefined].map((address) => trusted.trusts(address))).toEqual([false, false, false, false, false]);
  });

  it('nobody is trusted by default', () => {
    const nobody = trusting();
    expect(nobody.none).toBe(true);
    expect(nobody.trusts('127.0.0.1')).toBe(false);
  });
});

describe('clientOrigin', () => {
  it('an untrusted peer: its own address and the Host header, whatever X-Forwarded-* it sends', () => {
    const headers = { host: 'gw.example.com', 'x-forwarded-host': 'localhost', 'x-forwarded-for': '127.0.0.1' };
    expect(clientOrigin('203.0.113.9', headers, trusting(INGRESS))).toEqual({ clientAddress: '203.0.113.9', host: 'gw.example.com' });
  });

  it('a trusted peer: the Host it forwards, and the hop it added to X-Forwarded-For', () => {
    const headers = { host: 'gateway.svc', 'x-forwarded-host': 'mcp.example.com', 'x-forwarded-for': '198.51.100.4' };
    expect(clientOrigin(INGRESS, headers, trusting(INGRESS))).toEqual({ clientAddress: '198.51.100.4', host: 'mcp.example.com' });
  });

  it('walks X-Forwarded-For from the right past trusted proxies only: a client-written hop to the left is never the client', () => {
    const headers = { 'x-forwarded-for': '127.0.0.1, 198.51.100.4, 10.1.0.9' };
    expect(clientOrigin(INGRESS, headers, trusting('10.1.0.0/16')).clientAddress).toBe('198.51.100.4');
  });

  it('X-Forwarded-For over several header lines counts as one list', () => {
    const headers = { 'x-forwarded-for': ['127.0.0.1', '198.51.100.4'] };
    expect(clientOrigin(INGRESS, headers, trusting(INGRESS)).clientAddress).toBe('198.51.100.4');
  });

  it('a trusted peer that forwards for nobody is the client itself; without X-Forwarded-Host its Host counts', () => {
    expect(clientOrigin(INGRESS, { host: 'gw.example.com' }, trusting(INGRESS))).toEqual({ clientAddress: INGRESS, host: 'gw.example.com' });
  });

  it('several X-Forwarded-Host values: the one the trusted peer added (the last)', () => {
    const headers = { 'x-forwarded-host': 'localhost, mcp.example.com' };
    expect(clientOrigin(INGRESS, headers, trusting(INGRESS)).host).toBe('mcp.example.com');
  });

  it('Forwarded (RFC 7239) is never read', () => {
    const headers = { host: 'gw.example.com', forwarded: 'for=127.0.0.1;host=localhost' };
    expect(clientOrigin(INGRESS, headers, trusting(INGRESS))).toEqual({ clientAddress: INGRESS, host: 'gw.example.com' });
  });
});
