import { describe, expect, it } from 'vitest';
import { carriesLink, elicitationAnswer, speaksMultiRoundTrip, type ElicitationRequest } from '../../../src/decision/elicitation.js';

const CAPABLE = Buffer.from(
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } } } }),
);
const FORM_ONLY = Buffer.from(
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } } } }),
);

function request(overrides: Partial<ElicitationRequest>): ElicitationRequest {
  return { httpMethod: 'POST', protocolVersion: undefined, message: { method: 'tools/call', id: 1 }, body: CAPABLE, ...overrides };
}

describe('elicitationAnswer: the wire form of a consent request per protocol revision', () => {
  it.each<[string, Partial<ElicitationRequest>, ReturnType<typeof elicitationAnswer>]>([
    ['2025-11-25 request → -32042 error', { protocolVersion: '2025-11-25' }, 'url_elicitation_error'],
    ['no version header (initialize) → -32042 error', { message: { method: 'initialize', id: 0 } }, 'url_elicitation_error'],
    ['2025-11-25 notification → refusal with id null', { message: { method: 'notifications/initialized', id: undefined } }, 'url_elicitation_refusal'],
    ['2025-11-25 GET stream → refusal', { httpMethod: 'GET', message: undefined, body: undefined }, 'url_elicitation_refusal'],
    ['2026-07-28 tools/call, URL elicitation declared → InputRequiredResult', { protocolVersion: '2026-07-28' }, 'input_required'],
    ['2026-07-28 prompts/get → InputRequiredResult', { protocolVersion: '2026-07-28', message: { method: 'prompts/get', id: 2 } }, 'input_required'],
    ['2026-07-28 resources/read → InputRequiredResult', { protocolVersion: '2026-07-28', message: { method: 'resources/read', id: 2 } }, 'input_required'],
    ['a later revision behaves like 2026-07-28', { protocolVersion: '2027-01-01' }, 'input_required'],
    ['2026-07-28 form elicitation only → MissingRequiredClientCapability', { protocolVersion: '2026-07-28', body: FORM_ONLY }, 'missing_capability'],
    ['2026-07-28 no capabilities → MissingRequiredClientCapability', { protocolVersion: '2026-07-28', body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call"}') }, 'missing_capability'],
    ['2026-07-28 tools/list may not carry InputRequiredResult → 403', { protocolVersion: '2026-07-28', message: { method: 'tools/list', id: 3 } }, 'not_connected'],
    ['2026-07-28 notification → 403', { protocolVersion: '2026-07-28', message: { method: 'notifications/initialized', id: undefined } }, 'not_connected'],
    ['a malformed version header counts as an older revision', { protocolVersion: '2026-7-28' }, 'url_elicitation_error'],
  ])('%s', (_title, overrides, answer) => {
    expect(elicitationAnswer(request(overrides))).toBe(answer);
  });

  it('only the answers that carry a link make the gateway issue one', () => {
    expect(['url_elicitation_error', 'url_elicitation_refusal', 'input_required', 'missing_capability', 'not_connected'].filter((answer) => carriesLink(answer as never))).toEqual([
      'url_elicitation_error',
      'url_elicitation_refusal',
      'input_required',
    ]);
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
