import { describe, expect, it } from 'vitest';
import { normalizeResourceUri, resourceUriForm } from '../../../src/config/resource-uri.js';

describe('normalizeResourceUri (K1)', () => {
  it.each([
    ['scheme case', 'FILE:///secret.txt', 'file:///secret.txt'],
    ['file://localhost', 'file://localhost/secret.txt', 'file:///secret.txt'],
    ['file path case (case-insensitive file systems)', 'file:///Secret.TXT', 'file:///secret.txt'],
    ['file path case leaves escapes upper-case', 'file:///{Path}%41', 'file:///%7Bpath%7Da'],
    ['dot segments', 'file:///a/./b/../secret.txt', 'file:///a/secret.txt'],
    ['encoded dot segments', 'res://h/a/%2E%2e/b', 'res://h/b'],
    ['surrounding whitespace and controls', ' \u0000res://h/x\n ', 'res://h/x'],
    ['embedded tab and newline', 'res://h/a\tb\nc', 'res://h/abc'],
    ['special host case and default port', 'HTTPS://Example.COM:443/x', 'https://example.com/x'],
    ['non-special host case', 'ui://Widget/a', 'ui://widget/a'],
    ['IPv4 forms', 'http://0x7f.1/x', 'http://127.0.0.1/x'],
    ['escaped unreserved characters decoded', 'res://h/%7e%41%2d%2E', 'res://h/~A-.'],
    ['other escapes upper-cased', 'res://h/a%3fb%c3%a9', 'res://h/a%3Fb%C3%A9'],
    ['non-ASCII as UTF-8 escapes, NFC first', 'res://h/e\u0301', 'res://h/%C3%A9'],
    ['fragment dropped', 'res://h/x#part', 'res://h/x'],
    ['empty query dropped', 'res://h/x?', 'res://h/x'],
    ['K1 query dropped (servers dispatching on host and path ignore it)', 'res://h/x?a=%7e', 'res://h/x'],
    ['K1 file: query dropped (fileURLToPath ignores it)', 'file:///secret.txt?x=1', 'file:///secret.txt'],
    ['K1 userinfo dropped', 'https://user:pw@Docs.example.com/x', 'https://docs.example.com/x'],
    ['K1 trailing-dot host (the same name in DNS)', 'https://docs.example.com./x', 'https://docs.example.com/x'],
    ['K1 trailing-dot host of another scheme', 'res://H.example../x', 'res://h.example/x'],
    ['K1 empty port', 'https://h:/x', 'https://h/x'],
    ['K1 empty port of another scheme', 'res://h:/x', 'res://h/x'],
    ['K1 IDN host', 'https://BÜCHER.example/x', 'https://xn--bcher-kva.example/x'],
    ['K1 IDN host of another scheme', 'res://bücher/x', 'res://xn--bcher-kva/x'],
    ['K1 fullwidth host', 'https://ｄｏｃｓ.example/x', 'https://docs.example/x'],
    ['K1 IPv6 host with port', 'http://[::1]:8080/x', 'http://[::1]:8080/x'],
    ['trailing slash dropped', 'res://h/dir/', 'res://h/dir'],
    ['root path kept', 'https://h/', 'https://h/'],
    ['opaque path dot segments', 'mcp:a/../b', 'mcp:b'],
    ['opaque path as is otherwise', 'urn:isbn:123', 'urn:isbn:123'],
    ['backslash in special scheme', 'file:///a\\..\\secret.txt', 'file:///secret.txt'],
  ])('%s: %j → %j', (_name, raw, expected) => {
    expect(normalizeResourceUri(raw)).toBe(expected);
  });

  it.each([['relative', 'secret.txt'], ['empty', ''], ['bad port', 'http://h:99999/'], ['bad IPv6', 'http://[::x]/']])(
    'not a URI (%s) → refused',
    (_name, raw) => {
      expect(resourceUriForm(raw)).toEqual({ refused: 'not_a_uri' });
      expect(normalizeResourceUri(raw)).toBeUndefined();
    },
  );

  it.each([
    ['encoded slash', 'file:///x%2F..%2Fsecret.txt'],
    ['encoded slash, lower case', 'res://h/a%2fb'],
    ['encoded backslash', 'file:///x%5C..%5Csecret.txt'],
    ['encoded NUL', 'file:///secret.txt%00.png'],
    ['raw NUL (WHATWG encodes it)', 'file:///secret.txt\u0000.png'],
    ['raw backslash in another scheme', 'res://h/x\\..\\secret'],
    ['raw backslash in an opaque path', 'mcp:a\\b'],
    ['encoded slash in an opaque host', 'res://a%2Fb/x'],
  ])('K1 an ambiguous separator (%s) → refused', (_name, raw) => {
    expect(resourceUriForm(raw)).toEqual({ refused: 'ambiguous_separator' });
    expect(normalizeResourceUri(raw)).toBeUndefined();
  });

  it.each([
    ['a double-encoded slash (servers decode once)', 'res://h/a%252Fb', 'res://h/a%252Fb'],
    ['an encoded slash in the query, which is dropped', 'https://h/x?path=a%2Fb', 'https://h/x'],
  ])('K1 not ambiguous: %s', (_name, raw, expected) => {
    expect(normalizeResourceUri(raw)).toBe(expected);
  });

  it('is idempotent', () => {
    for (const raw of ['FILE://localhost/A/../B%7e?', 'ui://W/x/', 'mcp:./a', 'https://u@bücher.example.:/x?q#f']) {
      const once = normalizeResourceUri(raw);
      expect(once && normalizeResourceUri(once)).toBe(once);
    }
  });
});
