import { describe, expect, it } from 'vitest';
import type { CorsSettings } from '../../../src/config/types.js';
import {
  allowedRequestHeaders,
  corsDecision,
  preflightHeaders,
  publicDocumentPreflightHeaders,
} from '../../../src/decision/cors.js';

const ANY: CorsSettings = { anyOrigin: true, allowedOrigins: new Set(), maxAge: 600 };
const LISTED: CorsSettings = { anyOrigin: false, allowedOrigins: new Set(['https://app.example.test']), maxAge: 600 };

/** Every request header of the Streamable HTTP transport, as a browser lists them in a preflight. */
const MCP_HEADERS =
  'authorization,content-type,accept,mcp-protocol-version,mcp-session-id,last-event-id,mcp-method,mcp-name,mcp-param-region';

describe('allowedRequestHeaders', () => {
  it('echoes every MCP request header, Mcp-Param-* included, lower case and once', () => {
    expect(allowedRequestHeaders(`${MCP_HEADERS}, Mcp-Param-Region, MCP-PARAM-Unit_2`)).toEqual([
      'authorization',
      'content-type',
      'accept',
      'mcp-protocol-version',
      'mcp-session-id',
      'last-event-id',
      'mcp-method',
      'mcp-name',
      'mcp-param-region',
      'mcp-param-unit_2',
    ]);
  });

  it.each([
    ['a header outside the transport', 'x-evil, cookie, authorization', ['authorization']],
    ['an empty Mcp-Param- name', 'mcp-param-', []],
    ['a name with a character outside RFC 9110 tokens', 'mcp-param-a"b, mcp-param-a b', []],
    ['nothing requested', '', []],
    ['an absent header', undefined, []],
  ])('A11 leaves out %s', (_name, requested, expected) => {
    expect(allowedRequestHeaders(requested)).toEqual(expected);
  });

  it('echoes nothing from an absurdly long list', () => {
    expect(allowedRequestHeaders(Array.from({ length: 65 }, (_, index) => `mcp-param-p${index}`).join(','))).toEqual([]);
  });
});

describe('corsDecision', () => {
  it('A11 never answers `*` with credentials', () => {
    const decision = corsDecision(ANY, 'https://any.example');
    expect(decision).toMatchObject({ allowed: true, headers: { 'access-control-allow-origin': '*' } });
    expect(decision.allowed && decision.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('A11 grants a listed origin by name, varying on Origin, and exposes the headers MCP clients read', () => {
    const decision = corsDecision(LISTED, 'https://app.example.test');
    expect(decision).toEqual({
      allowed: true,
      headers: {
        'access-control-allow-origin': 'https://app.example.test',
        'access-control-expose-headers': 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, DPoP-Nonce',
        vary: 'Origin',
      },
    });
  });

  it('A11 refuses an origin that is not listed: no CORS header at all', () => {
    expect(corsDecision(LISTED, 'https://evil.example')).toEqual({ allowed: false });
  });
});

describe('preflightHeaders (MCP endpoint)', () => {
  it('A11 allows the requested MCP headers and methods, never with credentials', () => {
    const headers = preflightHeaders(ANY, MCP_HEADERS);
    expect(headers['access-control-allow-headers']).toBe(MCP_HEADERS.split(',').join(', '));
    expect(headers['access-control-allow-methods']).toBe('GET, POST, DELETE, OPTIONS');
    expect(headers['access-control-max-age']).toBe('600');
    expect(headers['access-control-allow-credentials']).toBeUndefined();
    expect(headers.vary).toBe('Origin, Access-Control-Request-Headers');
  });

  it('A11 omits Access-Control-Allow-Headers when nothing requested is allowed', () => {
    expect(preflightHeaders(ANY, 'x-evil')).not.toHaveProperty('access-control-allow-headers');
  });
});

describe('publicDocumentPreflightHeaders (metadata, JWKS)', () => {
  it('allows the headers browsers send with metadata requests, from any origin', () => {
    const headers = publicDocumentPreflightHeaders('content-type, mcp-protocol-version, authorization');
    expect(headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD, OPTIONS',
      'access-control-allow-headers': 'content-type, mcp-protocol-version, authorization',
    });
    expect(headers['access-control-allow-credentials']).toBeUndefined();
  });
});
