import { describe, expect, it } from 'vitest';
import { isAllowedRedirectUri, isLoopbackHostname } from '../../../src/authserver/redirect-uris.js';

describe('isAllowedRedirectUri', () => {
  it.each([
    'https://app.example.com/callback',
    'https://app.example.com:8443/cb?x=1',
    'http://127.0.0.1/callback',
    'http://127.0.0.1:33418/callback',
    'http://localhost:6274/oauth/callback',
    'http://LOCALHOST:1/cb',
    'http://[::1]:8080/cb',
  ])('allows %s', (uri) => {
    expect(isAllowedRedirectUri(uri)).toBe(true);
  });

  it.each([
    ['http on a public host', 'http://app.example.com/callback'],
    ['http on a private address', 'http://10.0.0.5/callback'],
    ['http on a link-local address', 'http://169.254.169.254/latest'],
    ['a loopback look-alike', 'http://127.0.0.1.evil.example/cb'],
    ['a fragment', 'https://app.example.com/cb#frag'],
    ['an empty fragment', 'https://app.example.com/cb#'],
    ['userinfo', 'https://user@app.example.com/cb'],
    ['userinfo on loopback', 'http://evil.example@127.0.0.1/cb'],
    ['a custom scheme', 'com.example.app:/callback'],
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:text/html,hi'],
    ['not a URI', 'callback'],
    ['empty', ''],
  ])('refuses %s', (_name, uri) => {
    expect(isAllowedRedirectUri(uri)).toBe(false);
  });
});

describe('isLoopbackHostname', () => {
  it.each([
    ['localhost', true],
    ['127.0.0.1', true],
    ['[::1]', true],
    ['127.0.0.2', false],
    ['::1', false],
    ['example.com', false],
  ])('%s → %s', (hostname, expected) => {
    expect(isLoopbackHostname(hostname)).toBe(expected);
  });
});
