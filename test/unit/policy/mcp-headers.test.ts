import { describe, expect, it } from 'vitest';
import { inspectJsonRpcBody, type JsonRpcMessageFacts } from '../../../src/policy/jsonrpc.js';
import { declaredProtocolVersion, decodeMcpHeaderValue, encodeMcpHeaderValue, mirroredHeadersProblem, requiresMirroredHeaders } from '../../../src/policy/mcp-headers.js';

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

describe('encodeMcpHeaderValue: what a client sends, and what the gateway decodes back', () => {
  it.each<[string, string, string]>([
    ['plain ASCII as is', 'us-west1', 'us-west1'],
    ['spaces inside as is', 'a b', 'a b'],
    ['non-ASCII as the sentinel', 'Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    ['surrounding spaces as the sentinel', ' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['a newline as the sentinel', 'line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['a value that looks like the sentinel as the sentinel', '=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
  ])('%s (the spec examples)', (_title, value, header) => {
    expect(encodeMcpHeaderValue(value)).toBe(header);
    expect(decodeMcpHeaderValue(header)).toBe(value);
  });
});

describe('mirroredHeadersProblem: present headers must equal the body (any revision)', () => {
  const call = facts({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'multiply' } });
  const read = facts({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///a b.txt' } });
  const list = facts({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const task = facts({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: 't-1' } });
  const subscribe = facts({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'file:///x' } });
  const response = facts({ jsonrpc: '2.0', id: 1, result: {} });

  it.each<[string, JsonRpcMessageFacts, Record<string, string | undefined>, string | undefined]>([
    ['no headers (older clients): nothing to check', call, {}, undefined],
    ['matching method and name', call, { 'mcp-method': 'tools/call', 'mcp-name': 'multiply' }, undefined],
    ['matching method only', list, { 'mcp-method': 'tools/list' }, undefined],
    ['a resource URI mirrored base64-encoded', read, { 'mcp-method': 'resources/read', 'mcp-name': b64('file:///a b.txt') }, undefined],
    ['method differs', call, { 'mcp-method': 'tools/list', 'mcp-name': 'multiply' }, 'mcp_method_differs'],
    ['name differs (routed as one tool, runs another)', call, { 'mcp-method': 'tools/call', 'mcp-name': 'add' }, 'mcp_name_differs'],
    ['name differs only in case', call, { 'mcp-method': 'tools/call', 'mcp-name': 'Multiply' }, 'mcp_name_differs'],
    ['Mcp-Name is compared only for tools/call, resources/read, prompts/get: tasks/get', task, { 'mcp-method': 'tasks/get', 'mcp-name': 't-1' }, undefined],
    ['... tools/list', list, { 'mcp-method': 'tools/list', 'mcp-name': 'anything' }, undefined],
    ['... resources/subscribe', subscribe, { 'mcp-method': 'resources/subscribe', 'mcp-name': 'file:///other' }, undefined],
    ['a method on a JSON-RPC response', response, { 'mcp-method': 'tools/call' }, 'mcp_method_differs'],
    ['undecodable sentinel', call, { 'mcp-method': 'tools/call', 'mcp-name': '=?base64?!!?=' }, 'mcp_name_differs'],
    ['two Mcp-Method lines joined by Node', call, { 'mcp-method': 'tools/call, tools/call', 'mcp-name': 'multiply' }, 'mcp_method_differs'],
    ['a valid Mcp-Param value', call, { 'mcp-param-region': 'us-west1' }, undefined],
    ['an encoded Mcp-Param value', call, { 'mcp-param-greeting': b64('Hello, 世界') }, undefined],
    ['an Mcp-Param value with a control character', call, { 'mcp-param-region': 'us\u0001west' }, 'mcp_param_invalid'],
    ['an Mcp-Param value with non-ASCII bytes', call, { 'mcp-param-region': 'r\u00e9gion' }, 'mcp_param_invalid'],
    ['an undecodable Mcp-Param sentinel', call, { 'mcp-param-region': '=?base64?%%?=' }, 'mcp_param_invalid'],
    ['an Mcp-Param name with an underscore (a parameter named tenant_id)', call, { 'mcp-param-tenant_id': 'acme' }, undefined],
    ['Mcp-Param twins: tenant_id and tenant-id fold into one CGI variable', call, { 'mcp-param-tenant_id': 'acme', 'mcp-param-tenant-id': 'evil' }, 'mcp_param_twins'],
    ['Mcp-Param twins with underscores in other places', call, { 'mcp-param-a_b-c': '1', 'mcp-param-a-b_c': '2' }, 'mcp_param_twins'],
    ['Mcp-Param names that stay apart after folding', call, { 'mcp-param-tenant_id': 'acme', 'mcp-param-tenantid': 'x', 'mcp-param-tenant-ids': 'y' }, undefined],
    ['a body protocol version under another header (downgrade)', facts({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }), { 'mcp-protocol-version': '2025-11-25' }, 'protocol_version_differs'],
    ['a body protocol version without the header', facts({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }), {}, 'protocol_version_differs'],
  ])('%s → %s', (_title, message, headers, expected) => {
    expect(mirroredHeadersProblem(headers, message)).toBe(expected);
  });
});

describe('mirroredHeadersProblem: requests declaring 2026-07-28 or later must carry them', () => {
  const modern = (method: string, params: Record<string, unknown> = {}, { id = 1, version = '2026-07-28' }: { id?: number | null; version?: string } = {}) =>
    facts({ jsonrpc: '2.0', ...(id === null ? {} : { id }), method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': version } } });
  const v = { 'mcp-protocol-version': '2026-07-28' };

  it.each<[string, JsonRpcMessageFacts, Record<string, string>, string | undefined]>([
    ['complete', modern('tools/call', { name: 'add' }), { ...v, 'mcp-method': 'tools/call', 'mcp-name': 'add' }, undefined],
    ['Mcp-Method missing on a request', modern('tools/list'), v, 'mcp_method_missing'],
    ['Mcp-Name missing on tools/call', modern('tools/call', { name: 'add' }), { ...v, 'mcp-method': 'tools/call' }, 'mcp_name_missing'],
    ['Mcp-Name missing on resources/read', modern('resources/read', { uri: 'x:y' }), { ...v, 'mcp-method': 'resources/read' }, 'mcp_name_missing'],
    ['Mcp-Name missing on prompts/get', modern('prompts/get', { name: 'p' }), { ...v, 'mcp-method': 'prompts/get' }, 'mcp_name_missing'],
    ['Mcp-Name not needed on tasks/get', modern('tasks/get', { taskId: 't' }), { ...v, 'mcp-method': 'tasks/get' }, undefined],
    ['a notification needs no Mcp-Method (the revision defines none)', modern('notifications/x', {}, { id: null }), v, undefined],
    ['a later revision too', modern('tools/list', {}, { version: '2027-01-01' }), { 'mcp-protocol-version': '2027-01-01' }, 'mcp_method_missing'],
    ['body and header versions differ', modern('tools/list'), { 'mcp-protocol-version': '2026-12-01', 'mcp-method': 'tools/list' }, 'protocol_version_differs'],
    ['2025-11-25 needs no mirrored headers', facts({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add' } }), { 'mcp-protocol-version': '2025-11-25' }, undefined],
  ])('%s → %s', (_title, message, headers, expected) => {
    expect(mirroredHeadersProblem(headers, message)).toBe(expected);
  });

  it.each([['2026-07-28', true], ['2027-01-01', true], ['2025-11-25', false], ['2025-06-18', false], [undefined, false]])(
    'requiresMirroredHeaders(%s) → %s',
    (version, expected) => {
      expect(requiresMirroredHeaders(version)).toBe(expected);
    },
  );

  it.each([['2026-07-28', '2026-07-28'], ['banana', undefined], ['2026-07-28, 2025-11-25', undefined]])('declaredProtocolVersion(%j) → %j', (value, expected) => {
    expect(declaredProtocolVersion({ 'mcp-protocol-version': value })).toBe(expected);
  });
});
