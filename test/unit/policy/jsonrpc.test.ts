import { describe, expect, it } from 'vitest';
import { inspectJsonRpcBody, MAX_JSON_DEPTH, targetKind } from '../../../src/policy/jsonrpc.js';

const JSON_TYPE = 'application/json';

function facts(body: string) {
  const inspection = inspectJsonRpcBody(Buffer.from(body), JSON_TYPE);
  if (inspection.kind !== 'message') throw new Error(`expected a message, got ${inspection.reason}`);
  return inspection.message;
}

describe('inspectJsonRpcBody: content type', () => {
  it.each([
    'application/json',
    'Application/JSON',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; charset=utf8',
    ' application/json ; foo=bar',
  ])('accepts %j', (contentType) => {
    expect(inspectJsonRpcBody('{"jsonrpc":"2.0","method":"ping","id":1}', contentType).kind).toBe('message');
  });

  it.each([
    ['absent', undefined],
    ['text/plain', 'text/plain'],
    ['form', 'application/x-www-form-urlencoded'],
    ['json-seq', 'application/json-seq'],
    ['jsonx', 'application/jsonx'],
    ['vendor +json', 'application/vnd.api+json'],
    ['utf-16 charset', 'application/json; charset=utf-16le'],
    ['latin-1 charset', 'application/json; charset=iso-8859-1'],
    ['empty', ''],
  ])('F11 non-JSON content type (%s) → unsupported_content_type', (_name, contentType) => {
    expect(inspectJsonRpcBody('{"jsonrpc":"2.0","method":"tools/call","id":1}', contentType)).toEqual({
      kind: 'invalid',
      reason: 'unsupported_content_type',
      id: null,
    });
  });
});

describe('inspectJsonRpcBody: refused bodies', () => {
  it.each([
    ['empty', ''],
    ['truncated', '{"jsonrpc":"2.0",'],
    ['not JSON', 'method=tools/call'],
    ['trailing garbage', '{"method":"ping"} x'],
    ['leading BOM', '\uFEFF{"method":"ping"}'],
    ['too deep', `{"params":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`],
  ])('%s → not_json', (_name, body) => {
    expect(inspectJsonRpcBody(Buffer.from(body), JSON_TYPE)).toEqual({ kind: 'invalid', reason: 'not_json', id: null });
  });

  it('invalid UTF-8 → not_json (no replacement-character guessing)', () => {
    const body = Buffer.concat([Buffer.from('{"method":"tools/call","params":{"name":"a'), Buffer.from([0xff]), Buffer.from('"}}')]);
    expect(inspectJsonRpcBody(body, JSON_TYPE)).toMatchObject({ kind: 'invalid', reason: 'not_json' });
  });

  it.each([
    ['one request', '[{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"},"id":1}]'],
    ['two requests', '[{"jsonrpc":"2.0","method":"ping","id":1},{"jsonrpc":"2.0","method":"tools/call","id":2}]'],
    ['empty', '[]'],
  ])('F11 batch (%s) → batch', (_name, body) => {
    expect(inspectJsonRpcBody(body, JSON_TYPE)).toEqual({ kind: 'invalid', reason: 'batch', id: null });
  });

  it.each(['"tools/call"', '42', 'null', 'true'])('%s → not_object', (body) => {
    expect(inspectJsonRpcBody(body, JSON_TYPE)).toEqual({ kind: 'invalid', reason: 'not_object', id: null });
  });

  it.each([
    ['method at top level', '{"jsonrpc":"2.0","method":"tools/list","method":"tools/call","id":1}'],
    ['params at top level', '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add"},"params":{"name":"rm"},"id":1}'],
    ['name in params', '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","name":"rm"},"id":1}'],
    ['escaped twin in params', '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","\\u006eame":"rm"},"id":1}'],
    ['id', '{"jsonrpc":"2.0","method":"ping","id":1,"id":2}'],
    ['inside arguments', '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a","arguments":{"x":1,"x":2}},"id":1}'],
  ])('F11 duplicate keys (%s) → duplicate_keys', (_name, body) => {
    expect(inspectJsonRpcBody(body, JSON_TYPE)).toEqual({ kind: 'invalid', reason: 'duplicate_keys', id: null });
  });

  it('F11 10k-deep nesting in params → not_json, no crash', () => {
    const depth = 10_000;
    const body = `{"jsonrpc":"2.0","method":"tools/call","params":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)},"id":1}`;
    expect(inspectJsonRpcBody(Buffer.from(body), JSON_TYPE)).toMatchObject({ kind: 'invalid', reason: 'not_json' });
  });
});

describe('inspectJsonRpcBody: message facts', () => {
  it.each([
    ['tools/call', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"multiply","arguments":{"a":2}}}', { method: 'tools/call', id: 1, toolName: 'multiply' }],
    ['resources/read', '{"jsonrpc":"2.0","id":"r1","method":"resources/read","params":{"uri":"file:///etc/x"}}', { method: 'resources/read', id: 'r1', resourceUri: 'file:///etc/x' }],
    ['resources/subscribe', '{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"db://t"}}', { method: 'resources/subscribe', id: 2, resourceUri: 'db://t' }],
    ['resources/unsubscribe', '{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"db://t"}}', { method: 'resources/unsubscribe', id: 3, resourceUri: 'db://t' }],
    ['prompts/get', '{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"summary"}}', { method: 'prompts/get', id: 4, promptName: 'summary' }],
    ['tools/list', '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"name":"ignored"}}', { method: 'tools/list', id: 5 }],
    ['notification', '{"jsonrpc":"2.0","method":"notifications/initialized"}', { method: 'notifications/initialized', id: undefined }],
    ['response', '{"jsonrpc":"2.0","id":7,"result":{}}', { method: undefined, id: 7 }],
    ['K5 negative zero id (an integer)', '{"jsonrpc":"2.0","id":-0,"method":"ping"}', { method: 'ping', id: -0 }],
    ['K5 integer id written with a fraction of zero', '{"jsonrpc":"2.0","id":7.0,"method":"ping"}', { method: 'ping', id: 7 }],
    ['K5 largest safe integer id', '{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}', { method: 'ping', id: 9007199254740991 }],
    ['K5 null id on an error response', '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}', { method: undefined, id: null }],
    ['tools/call without name', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}', { method: 'tools/call', id: 1 }],
    ['tools/call numeric name', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}', { method: 'tools/call', id: 1 }],
    ['tools/call positional params', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["multiply"]}', { method: 'tools/call', id: 1 }],
    ['tools/call without params', '{"jsonrpc":"2.0","id":1,"method":"tools/call"}', { method: 'tools/call', id: 1 }],
    ['prompts/get uri is not a name', '{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"uri":"x"}}', { method: 'prompts/get', id: 1 }],
    ['K2 completion of a prompt argument', '{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"}}}', { method: 'completion/complete', id: 1, promptName: 'p' }],
    ['K2 completion of a resource template', '{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"db://{t}"}}}', { method: 'completion/complete', id: 1, resourceUri: 'db://{t}' }],
    ['K2 completion ref type and operand disagree', '{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","uri":"db://t"}}}', { method: 'completion/complete', id: 1 }],
    ['K2 completion without ref', '{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{}}', { method: 'completion/complete', id: 1 }],
  ])('%s', (_name, body, expected) => {
    expect(facts(body)).toStrictEqual(expected);
  });

  it('F11 \\u-escaped method and tool name are evaluated decoded, as the upstream decodes them', () => {
    const message = facts('{"jsonrpc":"2.0","id":1,"method":"\\u0074ools/call","params":{"name":"\\u006dultiply"}}');
    expect(message).toStrictEqual({ method: 'tools/call', id: 1, toolName: 'multiply' });
  });

  it('reads a string body as well as a Buffer', () => {
    expect(inspectJsonRpcBody('{"jsonrpc":"2.0","method":"ping","id":"a"}', JSON_TYPE)).toEqual({
      kind: 'message',
      message: { method: 'ping', id: 'a' },
    });
  });

  it('inherited properties are not facts (__proto__ key stays an own, ignored property)', () => {
    expect(facts('{"jsonrpc":"2.0","__proto__":{"method":"tools/call"},"id":1,"result":{}}')).toStrictEqual({ method: undefined, id: 1 });
  });
});

describe('inspectJsonRpcBody: not a JSON-RPC 2.0 message (K5)', () => {
  it.each([
    ['object id', '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}'],
    ['array id', '{"jsonrpc":"2.0","id":[],"method":"ping"}'],
    ['boolean id', '{"jsonrpc":"2.0","id":false,"method":"ping"}'],
    ['object id on a response', '{"jsonrpc":"2.0","id":{},"result":{}}'],
    ['null id on a request (MCP request ids are strings or integers)', '{"jsonrpc":"2.0","id":null,"method":"ping"}'],
    ['id beyond the number range (Infinity)', '{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}'],
    ['id below the number range (-Infinity)', '{"jsonrpc":"2.0","id":-1e400,"method":"tools/list"}'],
    ['id that overflows through its exponent', '{"jsonrpc":"2.0","id":1e309,"method":"tools/list"}'],
    ['fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}'],
    ['id 2^53, where integers stop being exact', '{"jsonrpc":"2.0","id":9007199254740992,"method":"tools/list"}'],
    ['id 2^53 + 1, read as 2^53', '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}'],
    ['Infinity id on a response', '{"jsonrpc":"2.0","id":1e400,"result":{}}'],
    ['numeric method', '{"jsonrpc":"2.0","id":1,"method":5}'],
    ['null method', '{"jsonrpc":"2.0","id":1,"method":null}'],
    ['string params', '{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}'],
    ['null params', '{"jsonrpc":"2.0","id":1,"method":"ping","params":null}'],
    ['missing jsonrpc', '{"id":1,"method":"ping"}'],
    ['numeric jsonrpc', '{"jsonrpc":2.0,"id":1,"method":"ping"}'],
    ['response without id', '{"jsonrpc":"2.0","result":{}}'],
    ['response with result and error', '{"jsonrpc":"2.0","id":1,"result":{},"error":{}}'],
    ['empty object', '{}'],
  ])('%s → not_jsonrpc', (_name, body) => {
    expect(inspectJsonRpcBody(body, JSON_TYPE)).toEqual({ kind: 'invalid', reason: 'not_jsonrpc', id: null });
  });
});

describe('targetKind', () => {
  it.each([
    ['tools/call', 'tool'],
    ['resources/read', 'resource'],
    ['resources/subscribe', 'resource'],
    ['resources/unsubscribe', 'resource'],
    ['prompts/get', 'prompt'],
    ['tools/list', undefined],
    ['Tools/Call', undefined],
    [undefined, undefined],
  ])('%s → %s', (method, kind) => {
    expect(targetKind(method)).toBe(kind);
  });
});
