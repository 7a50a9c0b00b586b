import * as fs from 'node:fs';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headerPairs, withBearer } from './preload/bearer-headers.js';
import { globSync } from './preload/fs-with-glob-sync.js';

const target = { origin: 'http://127.0.0.1:4000', token: 'test-token' };
const added: [string, string] = ['authorization', 'Bearer test-token'];

describe('conformance preload: bearer token injection', () => {
  it.each([
    ['the gateway origin, no Host header', 'http://127.0.0.1:4000', { accept: '*/*' }, [['accept', '*/*'], added]],
    ['the gateway origin as a URL', new URL('http://127.0.0.1:4000/mcp'), {}, [added]],
    ['a Host header naming the gateway (any case)', 'http://127.0.0.1:4000', { Host: '127.0.0.1:4000' }, [['Host', '127.0.0.1:4000'], added]],
    ['another port', 'http://127.0.0.1:4001', {}, undefined],
    ['another host', 'http://localhost:4000', {}, undefined],
    ['a DNS-rebinding Host header: the token too (the gateway must refuse on Host/Origin alone)', 'http://127.0.0.1:4000', { Host: 'evil.example.com' }, [['Host', 'evil.example.com'], added]],
    ['an Authorization header already present', 'http://127.0.0.1:4000', { Authorization: 'Bearer other' }, undefined],
    ['no origin at all', undefined, {}, undefined],
  ])('%s', (_case, origin, headers, expected) => {
    expect(withBearer(target, origin, headers)).toEqual(expected);
  });

  it.each([
    ['an object with a list value', { a: '1', b: ['2', '3'] }, [['a', '1'], ['b', '2'], ['b', '3']]],
    ['a flat array', ['a', '1', 'host', 'x'], [['a', '1'], ['host', 'x']]],
    ['an iterable of pairs', new Map([['a', '1']]), [['a', '1']]],
    ['null', null, []],
  ])('reads headers given as %s', (_case, headers, expected) => {
    expect(headerPairs(headers)).toEqual(expected);
  });
});

describe('conformance preload: globSync for Node 20', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'glob-sync-'));
    for (const path of ['server-a-1/checks.json', 'server-b-2/checks.json', 'deep/x/y/checks.json', 'top.json', 'a/b/x.txt', 'a/bc/x.txt']) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), '[]');
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['**/checks.json', ['deep/x/y/checks.json', 'server-a-1/checks.json', 'server-b-2/checks.json']],
    ['*.json', ['top.json']],
    ['a/?/x.txt', ['a/b/x.txt']],
    ['a/*/x.txt', ['a/b/x.txt', 'a/bc/x.txt']],
  ])('%s', (pattern, expected) => {
    expect(globSync(pattern, { cwd: dir }).sort()).toEqual(expected);
    // Where Node has its own globSync (22+), the shim must agree with it.
    const native = (fs as { globSync?: (pattern: string, options: { cwd: string }) => string[] }).globSync;
    if (native) expect(native(pattern, { cwd: dir }).sort()).toEqual(expected);
  });
});
