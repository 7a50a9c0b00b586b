import { describe, expect, it } from 'vitest';
import { MAX_SESSION_ID_BYTES, readSessionId } from '../../../src/decision/session-id.js';

describe('readSessionId (checklist G2)', () => {
  it.each<[string, string | string[] | undefined, string]>([
    ['absent', undefined, 'absent'],
    ['a UUID', '1b4e28ba-2fa1-11d2-883f-0016541e4c2b', 'valid'],
    ['every visible ASCII character', Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i)).join(''), 'valid'],
    ['exactly 256 bytes', 'a'.repeat(MAX_SESSION_ID_BYTES), 'valid'],
    ['257 bytes', 'a'.repeat(MAX_SESSION_ID_BYTES + 1), 'invalid'],
    ['empty', '', 'invalid'],
    ['a space inside', 'abc def', 'invalid'],
    ['a tab', 'abc\tdef', 'invalid'],
    ['DEL (0x7F)', 'abc\x7f', 'invalid'],
    ['a Latin-1 byte as Node hands it over', 'caf\u00e9', 'invalid'],
    ['CR LF', 'abc\r\ndef', 'invalid'],
    ['two header lines joined by Node', 'abc, def', 'invalid'],
    ['an array', ['abc', 'def'], 'invalid'],
  ])('%s → %s', (_title, value, kind) => {
    expect(readSessionId(value).kind).toBe(kind);
  });
});
