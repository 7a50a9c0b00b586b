import { describe, expect, it } from 'vitest';
import { readMessage } from '../../../../src/decision/steps/message.js';
import { readMessageWithoutBody } from '../../../../src/decision/steps/message-without-body.js';
import { caller, facts, route, stateAt, stepRuntime, verdict } from '../../../helpers/decision.js';

const runtime = stepRuntime(
  [
    route('calc', '    policy: { scopes: [mcp], tools: { multiply: [calc:write] } }'),
    route('files', '    policy: { scopes: [mcp], resources: { "file:///secret": [files:secret] } }'),
    route('modern', '    policy: { scopes: [mcp], tools: { multiply: [calc:write] } }').replace('upstream: { url: "http://127.0.0.1:3000/mcp" }', 'upstream: { url: "http://127.0.0.1:3000/mcp", validates_mirrored_headers: true }'),
    route('open'),
  ].join('\n'),
);
const JSON_TYPE = { 'content-type': 'application/json' };
const call = (name: string) => JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name } });

describe('message step (a door with the body)', () => {
  it('one JSON-RPC message: its facts, its id for refusals', async () => {
    const state = stateAt(runtime, facts('POST', '/calc/mcp', JSON_TYPE), { body: call('multiply'), auth: caller() });
    expect(await verdict(() => readMessage(state))).toBe('passed');
    expect(state.message).toMatchObject({ method: 'tools/call', toolName: 'multiply', id: 7 });
    expect(state.jsonRpcId).toBe(7);
  });

  it.each<[string, string, Record<string, string>]>([
    ['a batch', `[${call('add')}]`, JSON_TYPE],
    ['not JSON', '{"jsonrpc":', JSON_TYPE],
    ['a duplicate method key', '{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}', JSON_TYPE],
    ['no body', '', JSON_TYPE],
  ])('%s → 400 invalid_jsonrpc', async (_name, body, headers) => {
    expect(await verdict(() => readMessage(stateAt(runtime, facts('POST', '/calc/mcp', headers), { body })))).toMatch(/^invalid_jsonrpc/);
  });

  it('Mcp-Name naming another tool than the body → 400 header_mismatch', async () => {
    const headers = { ...JSON_TYPE, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'add' };
    expect(await verdict(() => readMessage(stateAt(runtime, facts('POST', '/calc/mcp', headers), { body: call('multiply') })))).toBe('header_mismatch:mcp_name_differs');
  });

  it('a resource URI the resource policies cannot place → 400 invalid_params', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///secret%2F..%2Fother' } });
    expect(await verdict(() => readMessage(stateAt(runtime, facts('POST', '/files/mcp', JSON_TYPE), { body })))).toBe('invalid_params:unplaceable_resource_uri');
  });

  it('GET and DELETE carry no message; their Mcp-Param-* headers follow the same rules', async () => {
    expect(await verdict(() => readMessage(stateAt(runtime, facts('GET', '/calc/mcp'))))).toBe('passed');
    expect(await verdict(() => readMessage(stateAt(runtime, facts('DELETE', '/calc/mcp', { 'mcp-param-a_b': '1', 'mcp-param-a-b': '2' }))))).toMatch(/^header_mismatch/);
  });
});

describe('message without body step (a door without it)', () => {
  const modern = (name: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name });
  const ask = (path: string, scopes: string[], headers: Record<string, string> = {}) =>
    stateAt(runtime, facts('POST', path, headers), { auth: caller('alice', scopes), door: 'listener' });

  it('a per-tool route and a caller with only the route scopes → 400 body_required, whatever Mcp-Name says', async () => {
    expect(await verdict(() => readMessageWithoutBody(ask('/calc/mcp', ['mcp'], modern('add'))))).toBe('body_required:operation_policy_without_body');
  });

  it('a caller with every scope the route names passes; no message is made up', async () => {
    const state = ask('/calc/mcp', ['mcp', 'calc:write'], modern('add'));
    expect(await verdict(() => readMessageWithoutBody(state))).toBe('passed');
    expect(state.message).toBeUndefined();
  });

  it('upstream.validates_mirrored_headers: a 2026-07-28 request is read from Mcp-Method / Mcp-Name', async () => {
    const state = ask('/modern/mcp', ['mcp'], modern('multiply'));
    expect(await verdict(() => readMessageWithoutBody(state))).toBe('passed');
    expect(state.message).toMatchObject({ method: 'tools/call', toolName: 'multiply' });
    expect(await verdict(() => readMessageWithoutBody(ask('/modern/mcp', ['mcp'], { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' })))).toBe('header_mismatch:mcp_name_missing');
  });

  it('upstream.validates_mirrored_headers and a 2025-11-25 request: every route scope, else 400', async () => {
    expect(await verdict(() => readMessageWithoutBody(ask('/modern/mcp', ['mcp'])))).toBe('body_required:operation_policy_without_body');
  });

  it('a route that decides nothing per operation passes any caller', async () => {
    expect(await verdict(() => readMessageWithoutBody(ask('/open/mcp', [])))).toBe('passed');
  });
});
