import { describe, expect, it } from 'vitest';
import { checkJsonStructure as checkParsed } from '../../../src/policy/json-structure.js';

/** The check as the inspection runs it: on text JSON.parse accepted, with what it made of it. */
const checkJsonStructure = (text: string, maxDepth: number) => checkParsed(text, JSON.parse(text), maxDepth);

describe('checkJsonStructure', () => {
  it.each([
    ['flat object', '{"a":1,"b":2}'],
    ['same key in sibling objects', '{"a":{"x":1},"b":{"x":2}}'],
    ['same key in array elements', '[{"x":1},{"x":2}]'],
    ['key text repeated as a value', '{"a":"a","b":"a"}'],
    ['value with escaped quote and comma', '{"a":"x\\",\\"a\\":\\"y","b":1}'],
    ['key containing a comma and brace', '{"a,{":1,"a":2}'],
    ['string containing brackets', '{"a":"[{","b":"}]"}'],
    ['empty containers', '{"a":{},"b":[],"c":[{}]}'],
    ['scalars', '"text"'],
    ['whitespace and newlines between tokens', '{ "a" : [ 1 , { "a" : 2 } ] ,\n\t"b" : { } }'],
    ['__proto__ once', '{"__proto__":{"x":1},"x":2}'],
    ['keys that differ only in an escape', '{"a\\"b":1,"a\\\\":2,"a":3}'],
  ])('accepts %s', (_name, text) => {
    expect(checkJsonStructure(text, 64)).toBe('ok');
  });

  it.each([
    ['top level', '{"method":"tools/list","method":"tools/call"}'],
    ['nested', '{"params":{"name":"a","name":"b"}}'],
    ['after a nested object closes', '{"a":{"b":1},"a":2}'],
    ['inside an array element', '[1,{"k":1,"k":2}]'],
    ['escaped twin of a key', '{"name":"a","\\u006eame":"b"}'],
    ['deep in tool arguments', '{"params":{"arguments":{"x":[{"y":1,"y":1}]}}}'],
    ['with whitespace and newlines around it', '{ "a" : 1 ,\n  "b" : { "c" : 1 } ,\r\n "a" : 2 }'],
    ['__proto__ twice', '{"__proto__":{"x":1},"__proto__":{"y":1}}'],
    ['a key with an escaped quote, twice', '{"a\\"b":1,"a\\"b":2}'],
    ['once in each of two objects, plus twice in a third', '[{"k":1},{"k":1},{"k":1,"j":2,"k":3}]'],
  ])('F11 finds duplicate keys: %s', (_name, text) => {
    expect(checkJsonStructure(text, 64)).toBe('duplicate_keys');
  });

  it('F11 limits depth at the configured bound, counting arrays and objects', () => {
    expect(checkJsonStructure('[{"a":[1]}]', 3)).toBe('ok');
    expect(checkJsonStructure('[{"a":[[1]]}]', 3)).toBe('too_deep');
  });

  it('F11 100k-deep nesting is refused without exhausting the stack', () => {
    const depth = 100_000;
    const text = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    expect(checkJsonStructure(text, 64)).toBe('too_deep');
  });

  it('scans in linear time: a 1 MB object with 50k distinct keys is ok', () => {
    const entries = Array.from({ length: 50_000 }, (_, i) => `"k${i}":"${'v'.repeat(10)}"`);
    expect(checkJsonStructure(`{${entries.join(',')}}`, 64)).toBe('ok');
  });
});
