import { describe, expect, it } from 'vitest';
import { addressPolicy, nonPublicHost } from '../../../src/client/address-policy.js';

/** The hostname WHATWG URL parsing leaves, which is all the policy ever sees. */
const hostOf = (url: string) => new URL(url).hostname;

describe('nonPublicHost: every spelling of a non-public host, as WHATWG URL normalises it', () => {
  it.each<[string, string]>([
    ['http://127.0.0.1/', 'a loopback address'],
    ['http://127.1/', 'a loopback address'],
    ['http://2130706433/', 'a loopback address'],
    ['http://0x7f000001/', 'a loopback address'],
    ['http://0x7f.1/', 'a loopback address'],
    ['http://017700000001/', 'a loopback address'],
    ['http://[::1]/', 'a loopback address'],
    ['http://[0:0:0:0:0:0:0:1]/', 'a loopback address'],
    ['http://[::ffff:127.0.0.1]/', 'a loopback address'],
    ['http://[::ffff:7f00:1]/', 'a loopback address'],
    ['http://localhost/', 'a loopback name'],
    ['http://LOCALHOST./', 'a loopback name'],
    ['http://localhost../', 'a loopback name'],
    ['http://app.localhost/', 'a loopback name'],
    ['http://0.0.0.0/', 'the unspecified address'],
    ['http://0/', 'the unspecified address'],
    ['http://[::]/', 'the unspecified address'],
    ['http://169.254.169.254/', 'a link-local address'],
    ['http://2852039166/', 'a link-local address'],
    ['http://[::ffff:169.254.169.254]/', 'a link-local address'],
    ['http://[fe80::1]/', 'a link-local address'],
    ['http://[febf::1]/', 'a link-local address'],
    ['http://10.0.0.1/', 'a private address'],
    ['http://10.255.255.255/', 'a private address'],
    ['http://172.16.0.1/', 'a private address'],
    ['http://172.31.255.255/', 'a private address'],
    ['http://192.168.0.1/', 'a private address'],
    ['http://0xc0a80001/', 'a private address'],
    ['http://[::ffff:10.0.0.1]/', 'a private address'],
    ['http://[fc00::1]/', 'a unique local address'],
    ['http://[fd00:ec2::254]/', 'a unique local address'],
    ['http://100.64.0.1/', 'a shared (carrier-grade NAT) address'],
    ['http://224.0.0.1/', 'a multicast address'],
    ['http://255.255.255.255/', 'the broadcast address'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'a special-purpose address (rfc6052)'],
  ])('%s is %s', (url, kind) => {
    expect(nonPublicHost(hostOf(url))).toBe(kind);
  });

  it.each(['https://8.8.8.8/', 'https://172.32.0.1/', 'https://172.15.255.255/', 'https://[2001:4860:4860::8888]/', 'https://as.example.com/', 'https://localhost.example.com/', 'https://10.example.com/'])(
    '%s is public',
    (url) => {
      expect(nonPublicHost(hostOf(url))).toBeUndefined();
    },
  );
});

describe('addressPolicy: discovered URLs on non-public hosts are refused', () => {
  const typed = new URL('https://mcp.example.com/mcp');

  it.each(['http://127.0.0.1:9000/', 'http://[::1]/x', 'http://169.254.169.254/latest/meta-data/', 'http://localhost./', 'https://10.0.0.5/token', 'http://0x7f.1/'])(
    'from a public deployment, %s is refused with a message naming the host and --allow-private',
    (url) => {
      const refusal = addressPolicy(typed, false).refusal(url);
      expect(refusal).toContain(`refused ${new URL(url).hostname}: `);
      expect(refusal).toContain('pass --allow-private to allow it');
    },
  );

  it('public hosts and the typed host itself are allowed', () => {
    const policy = addressPolicy(typed, false);
    expect(policy.refusal('https://auth.example.com/.well-known/oauth-authorization-server')).toBeUndefined();
    expect(policy.refusal('https://MCP.example.com./.well-known/oauth-protected-resource/mcp')).toBeUndefined();
  });

  it('a typed URL on a private address is allowed even though that kind of host is refused when discovered', () => {
    const policy = addressPolicy(new URL('https://example.com/mcp'), false);
    expect(policy.refusal('https://10.1.1.1/')).toBeDefined();
    expect(addressPolicy(new URL('https://10.1.1.1/mcp'), false).refusal('https://10.1.1.1/')).toBeUndefined();
  });

  it.each(['http://127.0.0.1:8080/calc/mcp', 'http://localhost:8080/mcp', 'http://[::1]:8080/mcp', 'https://192.168.1.20/mcp'])(
    'a local deployment (typed %s) may name other non-public hosts',
    (url) => {
      expect(addressPolicy(new URL(url), false).refusal('http://169.254.169.254/')).toBeUndefined();
    },
  );

  it('--allow-private allows every host', () => {
    expect(addressPolicy(typed, true).refusal('http://169.254.169.254/')).toBeUndefined();
  });
});
