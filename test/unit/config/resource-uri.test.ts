import { describe, expect, it } from 'vitest';
import { normalizeResourceUri } from '../../../src/config/resource-uri.js';

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
    ['escaped unreserved characters decoded', 'res://h/%7e%41%2d', 'res://h/~A-'],
    ['other escapes upper-cased', 'res://h/a%2fb%c3%a9', 'res://h/a%2Fb%C3%A9'],
    ['non-ASCII as UTF-8 escapes, NFC first', 'res://h/e\u0301', 'res://h/%C3%A9'],
    ['fragment dropped', 'res://h/x#part', 'res://h/x'],
    ['empty query dropped', 'res://h/x?', 'res://h/x'],
    ['query kept, escapes normalised', 'res://h/x?a=%7e', 'res://h/x?a=~'],
    ['trailing slash dropped', 'res://h/dir/', 'res://h/dir'],
    ['root path kept', 'https://h/', 'https://h/'],
    ['opaque path dot segments', 'mcp:a/../b', 'mcp:b'],
    ['opaque path as is otherwise', 'urn:isbn:123', 'urn:isbn:123'],
    ['backslash in special scheme', 'file:///a\\..\\secret.txt', 'file:///secret.txt'],
    ['userinfo kept', 'res://u%7e@h/x', 'res://u~@h/x'],
  ])('%s: %j → %j', (_name, raw, expected) => {
    expect(normalizeResourceUri(raw)).toBe(expected);
  });

  it.each([['relative', 'secret.txt'], ['empty', ''], ['bad port', 'http://h:99999/'], ['bad IPv6', 'http://[::x]/']])(
    'not a URI (%s) → undefined',
    (_name, raw) => {
      expect(normalizeResourceUri(raw)).toBeUndefined();
    },
  );

  it('is idempotent', () => {
    for (const raw of ['FILE://localhost/A/../B%7e?', 'ui://W/x/', 'mcp:./a']) {
      const once = normalizeResourceUri(raw);
      expect(once && normalizeResourceUri(once)).toBe(once);
    }
  });
});
