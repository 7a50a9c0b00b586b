import { describe, expect, it } from 'vitest';
import { inspectJsonRpcBody, type JsonRpcMessageFacts } from '../../../src/policy/jsonrpc.js';
import { decodeMcpHeaderValue, mcpHeadersMismatch } from '../../../src/policy/mcp-headers.js';

function facts(message: unknown): JsonRpcMessageFacts {
  const inspection = inspectJsonRpcBody(JSON.stringify(message), 'application/json');
  if (inspection.kind !== 'message') throw new Error('test message is not a message');
  return inspection.message;
}

const b64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

describe('decodeMcpHeaderValue', () => {
  it.each<[string, string | string[], string | undefined]>([
    ['plain ASCII as is', 'tools/call', 'tools/call'],
    ['base64 sentinel of UTF-8', b64('café ☕'), 'café ☕'],
    ['an empty sentinel', '=?base64??=', ''],
    ['a look-alike not ending in ?= is a plain value', '=?base64?Y2Fm?=x', '=?base64?Y2Fm?=x'],
    ['base64 without its padding', '=?base64?Y2FmZQ?=', undefined],
    ['base64 with junk', '=?base64?Y2Fm*Q==?=', undefined],
    ['base64 of invalid UTF-8', `=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`, undefined],
    ['repeated header lines', ['a', 'b'], undefined],
  ])('%s', (_title, raw, expected) => {
    expect(decodeMcpHeaderValue(raw)).toBe(expected);
  });
});

describe('mcpHeadersMismatch (MCP 2026-07-28 HeaderMismatch)', () => {
  const call = facts({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'multiply' } });
  const read = facts({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///a b.txt' } });
  const list = facts({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const response = facts({ jsonrpc: '2.0', id: 1, result: {} });

  it.each<[string, JsonRpcMessageFacts, string | string[] | undefined, string | string[] | undefined, boolean]>([
    ['no headers (older clients): nothing to check', call, undefined, undefined, false],
    ['matching method and name', call, 'tools/call', 'multiply', false],
    ['matching method only', list, 'tools/list', undefined, false],
    ['a resource URI mirrored base64-encoded', read, 'resources/read', b64('file:///a b.txt'), false],
    ['method differs', call, 'tools/list', 'multiply', true],
    ['name differs (routed as one tool, runs another)', call, 'tools/call', 'add', true],
    ['name differs only in case', call, 'tools/call', 'Multiply', true],
    ['a name the body does not have', list, 'tools/list', 'multiply', true],
    ['a method on a JSON-RPC response', response, 'tools/call', undefined, true],
    ['undecodable sentinel', call, 'tools/call', '=?base64?!!?=', true],
    ['two Mcp-Method lines', call, ['tools/call', 'tools/call'], 'multiply', true],
  ])('%s → %s', (_title, message, method, name, expected) => {
    expect(mcpHeadersMismatch({ method, name }, message)).toBe(expected);
  });
});
