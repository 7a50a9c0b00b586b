import { describe, expect, it } from 'vitest';
import { carriesLink, elicitationAnswer, speaksMultiRoundTrip, type ElicitationRequest } from '../../../src/decision/elicitation.js';

const CAPABLE = Buffer.from(
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } } } }),
);
const FORM_ONLY = Buffer.from(
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } } } }),
);

const INITIALIZE_CAPABLE = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { capabilities: { elicitation: { url: {} } } } }));
const INITIALIZE_FORM_ONLY = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { capabilities: { elicitation: { form: {} } } } }));

function request(overrides: Partial<ElicitationRequest>): ElicitationRequest {
  return { httpMethod: 'POST', protocolVersion: undefined, message: { method: 'tools/call', id: 1 }, body: CAPABLE, ...overrides };
}

describe('elicitationAnswer: the wire form of a consent request per protocol revision', () => {
  it.each<[string, Partial<ElicitationRequest>, ReturnType<typeof elicitationAnswer>]>([
    ['2025-11-25 initialize declaring URL elicitation → -32042 error', { message: { method: 'initialize', id: 0 }, body: INITIALIZE_CAPABLE }, 'url_elicitation_error'],
    ['2025-11-25 initialize declaring form elicitation only → the link in the error text', { message: { method: 'initialize', id: 0 }, body: INITIALIZE_FORM_ONLY }, 'link_error'],
    ['2025-11-25 initialize without capabilities → the link in the error text', { message: { method: 'initialize', id: 0 }, body: Buffer.from('{"jsonrpc":"2.0","id":0,"method":"initialize"}') }, 'link_error'],
    ['2025-11-25 tools/call (its session\'s capabilities are unknown here) → tool error with the link', { protocolVersion: '2025-11-25' }, 'tool_error'],
    ['2025-11-25 tools/list → the link in the error text', { protocolVersion: '2025-11-25', message: { method: 'tools/list', id: 2 } }, 'link_error'],
    ['2025-11-25 notification → refusal with id null', { message: { method: 'notifications/initialized', id: undefined } }, 'url_elicitation_refusal'],
    ['2025-11-25 GET stream → refusal', { httpMethod: 'GET', message: undefined, body: undefined }, 'url_elicitation_refusal'],
    ['2026-07-28 tools/call, URL elicitation declared → InputRequiredResult', { protocolVersion: '2026-07-28' }, 'input_required'],
    ['2026-07-28 prompts/get → InputRequiredResult', { protocolVersion: '2026-07-28', message: { method: 'prompts/get', id: 2 } }, 'input_required'],
    ['2026-07-28 resources/read → InputRequiredResult', { protocolVersion: '2026-07-28', message: { method: 'resources/read', id: 2 } }, 'input_required'],
    ['a later revision behaves like 2026-07-28', { protocolVersion: '2027-01-01' }, 'input_required'],
    ['2026-07-28 tools/call, form elicitation only → tool error with the link', { protocolVersion: '2026-07-28', body: FORM_ONLY }, 'tool_error'],
    ['2026-07-28 tools/call, no capabilities → tool error with the link', { protocolVersion: '2026-07-28', body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call"}') }, 'tool_error'],
    ['2026-07-28 resources/read, no capabilities → the link in the error text', { protocolVersion: '2026-07-28', message: { method: 'resources/read', id: 2 }, body: undefined }, 'link_error'],
    ['2026-07-28 server/discover → the link in the error text', { protocolVersion: '2026-07-28', message: { method: 'server/discover', id: 3 } }, 'link_error'],
    ['2026-07-28 tools/list → the link in the error text', { protocolVersion: '2026-07-28', message: { method: 'tools/list', id: 3 } }, 'link_error'],
    ['2026-07-28 notification → 403', { protocolVersion: '2026-07-28', message: { method: 'notifications/initialized', id: undefined } }, 'not_connected'],
    ['a malformed version header counts as an older revision', { protocolVersion: '2026-7-28' }, 'tool_error'],
  ])('%s', (_title, overrides, answer) => {
    expect(elicitationAnswer(request(overrides))).toBe(answer);
  });

  it('every answer but the 2026-07-28 refusal of what has no JSON-RPC answer carries a link', () => {
    const answers = ['url_elicitation_error', 'url_elicitation_refusal', 'input_required', 'tool_error', 'link_error', 'not_connected'] as const;
    expect(answers.filter((answer) => !carriesLink(answer))).toEqual(['not_connected']);
  });

  it.each([
    ['2026-07-28', true],
    ['2025-11-25', false],
    [undefined, false],
    ['latest', false],
  ])('speaksMultiRoundTrip(%s) = %s', (version, expected) => {
    expect(speaksMultiRoundTrip(version)).toBe(expected);
  });
});
