import { describe, expect, it } from 'vitest';
import { answerStarted, listRewrite, upstreamRefusal } from '../../../../src/decision/after-answer.js';
import type { UpstreamCredentialProvider } from '../../../../src/decision/ports.js';
import { GatewayError } from '../../../../src/decision/refusal.js';
import { takeSlot } from '../../../../src/decision/steps/slot.js';
import { resolveUpstreamHeaders } from '../../../../src/decision/steps/upstream-headers.js';
import { caller, facts, route, stateAt, stepRuntime, verdict } from '../../../helpers/decision.js';

describe('upstream headers step', () => {
  it('the route credential, never the caller token; at once for a static credential', () => {
    const runtime = stepRuntime(route('calc'));
    const state = stateAt(runtime, facts('POST', '/calc/mcp'), { auth: caller() });
    expect(resolveUpstreamHeaders(state)).toBeUndefined();
    expect(state.upstreamHeaders).toEqual({ authorization: 'Bearer upstream-secret' });
  });

  it('the request facts a per-user grant needs to ask for consent reach the provider; its refusal is the step\'s', async () => {
    const asked: unknown[] = [];
    const credentials: UpstreamCredentialProvider = {
      headersFor: (_auth, subjectToken, request) => {
        asked.push({ subjectToken, ...request });
        return Promise.reject(new GatewayError('upstream_credentials_failed'));
      },
    };
    const runtime = stepRuntime(route('notes'), { credentials });
    const state = stateAt(runtime, facts('POST', '/notes/mcp', { 'mcp-protocol-version': '2025-11-25' }), { auth: caller(), body: '{}' });
    state.message = { method: 'tools/call', id: 3 };
    expect(await verdict(() => resolveUpstreamHeaders(state))).toBe('upstream_credentials_failed');
    expect(asked).toEqual([{ subjectToken: 'caller-token', httpMethod: 'POST', protocolVersion: '2025-11-25', message: { method: 'tools/call', id: 3 }, body: Buffer.from('{}') }]);
  });
});

describe('slot step (proxy door)', () => {
  const runtime = stepRuntime(route('calc'), {}, 'limits: { max_streams_per_principal: 1, max_concurrent_requests_per_principal: 2 }');
  const slotFor = (method: string, subject = 'alice') => {
    const state = stateAt(runtime, facts(method, '/calc/mcp'), { auth: caller(subject) });
    return { state, outcome: verdict(() => takeSlot(state)) };
  };

  it('a GET takes a stream slot; past the stream cap → 429 too_many_streams', async () => {
    const first = slotFor('GET');
    expect(await first.outcome).toBe('passed');
    expect(await slotFor('GET').outcome).toBe('too_many_streams:principal_slots_full');
    first.state.releaseSlot?.();
    expect(await slotFor('GET').outcome).toBe('passed');
  });

  it('POSTs take request slots, not stream slots; past the request cap → 429 too_many_requests', async () => {
    expect(await slotFor('POST', 'bob').outcome).toBe('passed');
    expect(await slotFor('DELETE', 'bob').outcome).toBe('passed');
    expect(await slotFor('POST', 'bob').outcome).toBe('too_many_requests:principal_slots_full');
    expect(await slotFor('GET', 'bob').outcome).toBe('passed');
  });
});

describe('after the upstream answered', () => {
  it('401 and 403 are never relayed: upstream_rejected; a 401 drops a per-user grant first', async () => {
    const dropped: number[] = [];
    const credentials: UpstreamCredentialProvider = { headersFor: () => ({}), upstreamRejected: () => Promise.resolve(void dropped.push(1)) };
    const state = stateAt(stepRuntime(route('notes'), { credentials }), facts('POST', '/notes/mcp'), { auth: caller() });
    expect((await upstreamRefusal(state, 401))?.reason).toBe('upstream_status_401');
    expect((await upstreamRefusal(state, 403))?.reason).toBe('upstream_status_403');
    expect(dropped).toEqual([1]);
    expect(upstreamRefusal(state, 200)).toBeUndefined();
    expect(upstreamRefusal(state, 500)).toBeUndefined();
  });

  it('a GET answered without a stream gives its stream slot back at once; a POST keeps its request slot', () => {
    const runtime = stepRuntime(route('calc'));
    const get = stateAt(runtime, facts('GET', '/calc/mcp'), { auth: caller() });
    const post = stateAt(runtime, facts('POST', '/calc/mcp'), { auth: caller() });
    takeSlot(get);
    takeSlot(post);
    answerStarted(get, false);
    answerStarted(post, false);
    expect(runtime.slots.streams.open(caller())).toBe(0);
    expect(runtime.slots.requestsInFlight.open(caller())).toBe(1);
  });

  it('policy.hide_unauthorized filters the list a POST asked for; nothing else is rewritten', () => {
    const runtime = stepRuntime(route('calc', '    policy: { scopes: [mcp], tools: { multiply: [calc:write] }, hide_unauthorized: true }'));
    const list = stateAt(runtime, facts('POST', '/calc/mcp'), { auth: caller('alice', ['mcp']) });
    list.message = { method: 'tools/list', id: 4 };
    const rewrite = listRewrite(list);
    const answer = { jsonrpc: '2.0', id: 4, result: { tools: [{ name: 'add' }, { name: 'multiply' }] } };
    // A filtered list is the caller's own: marked private for caches (2026-07-28 cacheScope).
    expect(rewrite?.(answer)).toEqual({ jsonrpc: '2.0', id: 4, result: { tools: [{ name: 'add' }], cacheScope: 'private' } });
    const call = stateAt(runtime, facts('POST', '/calc/mcp'), { auth: caller('alice', ['mcp']) });
    call.message = { method: 'tools/call', id: 5, toolName: 'add' };
    expect(listRewrite(call)).toBeUndefined();
  });
});
