import { describe, expect, it } from 'vitest';
import type { ChallengeContext } from '../../../src/decision/challenge.js';
import { errorResponse } from '../../../src/decision/responses.js';
import { GatewayError, type RefusalCode, type UrlElicitation } from '../../../src/decision/refusal.js';

/** Every code of the closed set, so a new one is covered by the checks below the day it is added. */
const CODES: Readonly<Record<RefusalCode, true>> = {
  missing_token: true,
  invalid_request: true,
  invalid_token: true,
  invalid_dpop_proof: true,
  use_dpop_nonce: true,
  insufficient_scope: true,
  auth_unavailable: true,
  origin_forbidden: true,
  host_forbidden: true,
  invalid_jsonrpc: true,
  invalid_params: true,
  body_required: true,
  payload_too_large: true,
  not_found: true,
  upstream_unreachable: true,
  upstream_rejected: true,
  upstream_timeout: true,
  upstream_credentials_failed: true,
  invalid_session_id: true,
  session_not_found: true,
  header_mismatch: true,
  rate_limited: true,
  too_many_streams: true,
  too_many_requests: true,
  elicitation_required: true,
  draining: true,
  proxy_unauthenticated: true,
  proxy_description_conflict: true,
  proxy_description_incomplete: true,
  bad_request: true,
  internal_error: true,
  list_unfilterable: true,
};

/** A refusal of `code` with the fields the code requires (the same value for every test). */
function refusalOf(code: RefusalCode): GatewayError {
  switch (code) {
    case 'insufficient_scope':
      return new GatewayError(code, { requiredScopes: ['mcp'] });
    case 'rate_limited':
    case 'too_many_streams':
    case 'too_many_requests':
      return new GatewayError(code, { retryAfterMs: 1_000 });
    case 'elicitation_required':
      return new GatewayError(code, { elicitation: { answer: 'not_connected', message: 'Connect' } });
    case 'bad_request':
      return new GatewayError(code, { status: 400 });
    case 'use_dpop_nonce':
      return new GatewayError(code, { nonce: 'n0nce' });
    default:
      return new GatewayError(code);
  }
}

const CHALLENGE: ChallengeContext = {
  metadataUrl: 'https://gw.example/.well-known/oauth-protected-resource/mcp',
  challengeScopes: ['mcp'],
  alsoNamedScopes: [],
  advertisedScopes: [],
};

describe('errorResponse: JSON-RPC error codes', () => {
  it.each(Object.keys(CODES) as RefusalCode[])(
    '%s uses a standard JSON-RPC code or one MCP defines (-32020…-32022), never another of -32000…-32099',
    (code) => {
      const { body } = errorResponse(refusalOf(code), CHALLENGE, 7);
      const parsed = JSON.parse(body) as { error?: { code?: unknown } };
      const jsonRpcCode = parsed.error?.code;
      if (typeof jsonRpcCode !== 'number') return;
      const mcpDefined = jsonRpcCode >= -32022 && jsonRpcCode <= -32020;
      const standard = [-32700, -32600, -32601, -32602, -32603].includes(jsonRpcCode);
      expect(mcpDefined || standard).toBe(true);
    },
  );

  it.each<[RefusalCode, number, number]>([
    ['header_mismatch', 400, -32020],
    ['invalid_jsonrpc', 400, -32600],
    ['invalid_params', 400, -32602],
    ['upstream_unreachable', 502, -32603],
    ['upstream_rejected', 502, -32603],
    ['upstream_timeout', 504, -32603],
    ['upstream_credentials_failed', 502, -32603],
    ['draining', 503, -32603],
    ['rate_limited', 429, -32603],
    ['too_many_streams', 429, -32603],
    ['too_many_requests', 429, -32603],
    ['session_not_found', 404, -32600],
  ])('%s → HTTP %i, JSON-RPC %i', (code, status, jsonRpcCode) => {
    const response = errorResponse(refusalOf(code), CHALLENGE, 7);
    expect(response.statusCode).toBe(status);
    expect((JSON.parse(response.body) as { error: { code: number } }).error.code).toBe(jsonRpcCode);
  });
});

describe('errorResponse: header_mismatch', () => {
  it('names every mirrored header the refusal covers (issue 12 gap 5), whatever the reason, echoing nothing', () => {
    const messages = ['mcp_name_differs', 'mcp_param_twins', 'protocol_version_differs'].map((reason) => {
      const { body } = errorResponse(new GatewayError('header_mismatch', { reason }), CHALLENGE, 7);
      return (JSON.parse(body) as { error: { message: string } }).error.message;
    });
    expect(new Set(messages).size).toBe(1);
    for (const header of ['Mcp-Method', 'Mcp-Name', 'Mcp-Param-*', 'MCP-Protocol-Version']) expect(messages[0]).toContain(header);
    expect(messages[0]).not.toMatch(/mcp_|twins|differs/);
  });
});

describe('errorResponse: URL elicitation of a consent link (user_oauth)', () => {
  const link = { url: 'https://gw.example/consent/connect?link=abc', elicitationId: 'e-1' };
  const elicitation = (answer: UrlElicitation['answer'], withLink = true): GatewayError =>
    new GatewayError('elicitation_required', { elicitation: { answer, message: 'Connect Notes', ...(withLink ? { link } : {}) } });
  const parse = (body: string) => JSON.parse(body) as Record<string, unknown>;

  it('2025-11-25: HTTP 200 (so clients read a JSON-RPC error, not a transport failure), -32042 — the one code of -32000…-32099 MCP 2025-11-25 defines for it', () => {
    const response = errorResponse(elicitation('url_elicitation_error'), CHALLENGE, 7);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(parse(response.body)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32042,
        message: `Connect Notes: open ${link.url} in a browser to connect your account, then try again.`,
        data: { elicitations: [{ mode: 'url', elicitationId: 'e-1', url: link.url, message: 'Connect Notes' }] },
      },
    });
  });

  it('2025-11-25 without a JSON-RPC answer to give: 403, id null', () => {
    const response = errorResponse(elicitation('url_elicitation_refusal'), CHALLENGE, 7);
    expect(response.statusCode).toBe(403);
    expect(parse(response.body)).toMatchObject({ id: null, error: { code: -32042 } });
  });

  it('2026-07-28: InputRequiredResult, keyed by the elicitation id', () => {
    const response = errorResponse(elicitation('input_required'), CHALLENGE, 'r');
    expect(response.statusCode).toBe(200);
    expect(parse(response.body)).toEqual({
      jsonrpc: '2.0',
      id: 'r',
      result: { resultType: 'input_required', inputRequests: { 'e-1': { method: 'elicitation/create', params: { mode: 'url', message: 'Connect Notes', url: link.url } } } },
    });
  });

  it('a tools/call without URL elicitation: a tool result with isError whose text holds the link (agents show it to the person)', () => {
    const response = errorResponse(elicitation('tool_error'), CHALLENGE, 7);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(parse(response.body)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: `Connect Notes: open ${link.url} in a browser to connect your account, then try again.` }], isError: true },
    });
  });

  it('any other request without URL elicitation (initialize, server/discover, lists): HTTP 200, a JSON-RPC error whose message holds the link', () => {
    const response = errorResponse(elicitation('link_error'), CHALLENGE, 'd');
    expect(response.statusCode).toBe(200);
    expect(parse(response.body)).toEqual({
      jsonrpc: '2.0',
      id: 'd',
      error: { code: -32600, message: `Connect Notes: open ${link.url} in a browser to connect your account, then try again.` },
    });
  });

  it.each<[UrlElicitation['answer'], boolean, number, number]>([
    ['not_connected', false, 403, -32600],
    ['not_connected', true, 403, -32600],
    ['tool_error', false, 403, -32600],
    ['link_error', false, 403, -32600],
    ['url_elicitation_error', false, 403, -32600],
  ])('%s (link: %s) → HTTP %i, JSON-RPC %i, no link', (answer, withLink, status, code) => {
    const response = errorResponse(elicitation(answer, withLink), CHALLENGE, 7);
    expect(response.statusCode).toBe(status);
    expect(parse(response.body)).toMatchObject({ id: 7, error: { code } });
    expect(response.body).not.toContain('/consent/');
  });
});
