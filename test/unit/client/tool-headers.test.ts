import { describe, expect, it } from 'vitest';
import { toolHeaderProblem, toolParamHeaders } from '../../../src/client/tool-headers.js';

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

describe('x-mcp-header annotations a client must refuse (the tool is left out of tools/list)', () => {
  it.each<[string, unknown, string]>([
    ['an empty name', schema({ a: { type: 'string', 'x-mcp-header': '' } }), 'not an HTTP field-name token'],
    ['a name with a space', schema({ a: { type: 'string', 'x-mcp-header': 'My Region' } }), 'not an HTTP field-name token'],
    ['a name with CR LF', schema({ a: { type: 'string', 'x-mcp-header': 'R\r\nX-Injected: 1' } }), 'not an HTTP field-name token'],
    ['a name that is not a string', schema({ a: { type: 'string', 'x-mcp-header': 7 } }), 'not an HTTP field-name token'],
    ['a number parameter', schema({ a: { type: 'number', 'x-mcp-header': 'A' } }), 'not a string, integer or boolean'],
    ['an object parameter', schema({ a: { type: 'object', 'x-mcp-header': 'A' } }), 'not a string, integer or boolean'],
    ['a parameter without a type', schema({ a: { 'x-mcp-header': 'A' } }), 'not a string, integer or boolean'],
    ['inside items', schema({ a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } }), 'not reachable through properties alone'],
    ['inside oneOf', schema({ a: { oneOf: [{ type: 'string', 'x-mcp-header': 'A' }] } }), 'not reachable through properties alone'],
    ['inside if/then', schema({}, { if: { properties: { a: { type: 'string' } } }, then: { properties: { b: { type: 'string', 'x-mcp-header': 'B' } } } }), 'not reachable through properties alone'],
    ['behind $ref, in $defs', schema({ a: { $ref: '#/$defs/r' } }, { $defs: { r: { type: 'string', 'x-mcp-header': 'R' } } }), 'not reachable through properties alone'],
    ['on the root schema itself', { type: 'string', 'x-mcp-header': 'Root' }, 'not on a parameter'],
    ['two names equal but for case', schema({ a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'string', 'x-mcp-header': 'REGION' } }), 'two x-mcp-header values are the same'],
  ])('%s', (_name, inputSchema, problem) => {
    expect(toolHeaderProblem(inputSchema)).toContain(problem);
  });

  it.each<[string, unknown]>([
    ['no annotation', schema({ a: { type: 'string' } })],
    ['a string, an integer and a boolean', schema({ a: { type: 'string', 'x-mcp-header': 'A' }, n: { type: 'integer', 'x-mcp-header': 'N' }, f: { type: 'boolean', 'x-mcp-header': 'F' } })],
    ['a nested property reached through properties only', schema({ outer: { type: 'object', properties: { inner: { type: 'string', 'x-mcp-header': 'Inner' } } } })],
    ['a property named x-mcp-header (a name, not an annotation)', schema({ 'x-mcp-header': { type: 'string' } })],
  ])('usable: %s', (_name, inputSchema) => {
    expect(toolHeaderProblem(inputSchema)).toBeUndefined();
  });
});

describe('Mcp-Param-* headers of a call', () => {
  const inputSchema = schema({
    region: { type: 'string', 'x-mcp-header': 'Region' },
    count: { type: 'integer', 'x-mcp-header': 'Count' },
    dry: { type: 'boolean', 'x-mcp-header': 'Dry' },
    outer: { type: 'object', properties: { tenant: { type: 'string', 'x-mcp-header': 'Tenant' } } },
  });

  it('mirrors each annotated argument present: strings encoded when not plain, integers in decimal, booleans lower case', () => {
    expect(toolParamHeaders(inputSchema, { region: 'Hello, 世界', count: -7, dry: false, outer: { tenant: 't1' } })).toEqual({
      'Mcp-Param-Region': '=?base64?SGVsbG8sIOS4lueVjA==?=',
      'Mcp-Param-Count': '-7',
      'Mcp-Param-Dry': 'false',
      'Mcp-Param-Tenant': 't1',
    });
  });

  it('omits arguments that are absent or null, and values of another type', () => {
    expect(toolParamHeaders(inputSchema, { region: null, count: 1.5, outer: 'flat' })).toEqual({});
  });

  it('an invalid schema mirrors nothing (the tool is not offered at all)', () => {
    expect(toolParamHeaders(schema({ a: { type: 'number', 'x-mcp-header': 'A' } }), { a: 1 })).toEqual({});
  });
});
