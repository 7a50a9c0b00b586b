import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/auth/types.js';
import { auditRecord, MAX_AUDIT_NAME_LENGTH } from '../../../src/observability/audit.js';
import { redactFields, SENSITIVE_KEYS } from '../../../src/observability/logger.js';

const auth: AuthContext = {
  issuer: 'https://as.example.com',
  subject: 'alice',
  clientId: 'ide',
  scopes: new Set(['mcp:tools']),
  audience: ['https://gw.example.com/calc/mcp'],
  expiresAt: 0,
  tokenKind: 'jwt',
};

describe('audit record', () => {
  it('names principal (issuer#subject), client, operation and outcome', () => {
    expect(
      auditRecord({
        route: 'calc',
        httpMethod: 'POST',
        auth,
        message: { method: 'tools/call', id: 1, toolName: 'add' },
        status: 200,
        latencyMs: 12.345,
      }),
    ).toEqual({
      route: 'calc',
      principal: 'https://as.example.com#alice',
      client_id: 'ide',
      http_method: 'POST',
      jsonrpc_method: 'tools/call',
      tool: 'add',
      outcome: 'ok',
      status: 200,
      latency_ms: 12.3,
    });
  });

  it.each([
    ['resources/read', { resourceUri: 'file:///notes.txt' }, { resource: 'file:///notes.txt' }],
    ['prompts/get', { promptName: 'summary' }, { prompt: 'summary' }],
  ])('%s carries its target', (method, facts, expected) => {
    expect(auditRecord({ route: 'calc', httpMethod: 'POST', auth, message: { method, id: 1, ...facts }, status: 200, latencyMs: 1 })).toMatchObject(expected);
  });

  it('a refused or abandoned request has no principal; a client-chosen name is bounded', () => {
    const refused = auditRecord({ route: 'calc', httpMethod: 'GET', auth: undefined, message: undefined, status: 401, latencyMs: 1 });
    expect(refused).toEqual({ route: 'calc', http_method: 'GET', outcome: '401', status: 401, latency_ms: 1 });
    const gone = auditRecord({ route: 'calc', httpMethod: 'POST', auth: { ...auth, subject: undefined }, message: { method: 'tools/call', id: 1, toolName: 'x'.repeat(5000) }, status: undefined, latencyMs: 1 });
    expect(gone).toMatchObject({ principal: 'https://as.example.com#', outcome: 'aborted' });
    expect(gone).not.toHaveProperty('status');
    expect(gone.tool?.length).toBe(MAX_AUDIT_NAME_LENGTH + 1);
  });

  it('leaves every absent fact out (no undefined fields) and keeps the field order of the log line', () => {
    const record = auditRecord({
      route: 'calc',
      httpMethod: 'POST',
      auth: { ...auth, clientId: undefined },
      message: { method: undefined, id: undefined, toolName: 'add' },
      status: undefined,
      latencyMs: 0.04,
    });
    expect(Object.entries(record)).toEqual([
      ['route', 'calc'],
      ['http_method', 'POST'],
      ['outcome', 'aborted'],
      ['latency_ms', 0],
      ['principal', 'https://as.example.com#alice'],
      ['tool', 'add'],
    ]);
    const full = auditRecord({
      route: 'calc',
      httpMethod: 'POST',
      auth,
      message: { method: 'resources/read', id: 1, toolName: 't', resourceUri: 'file:///a', promptName: 'p' },
      status: 200,
      latencyMs: 1,
    });
    expect(Object.keys(full)).toEqual(['route', 'http_method', 'outcome', 'latency_ms', 'principal', 'client_id', 'jsonrpc_method', 'tool', 'resource', 'prompt', 'status']);
  });

  it('H5: the logger may skip redacting it because no key it can have is sensitive and no value is an object', () => {
    const every = [
      auditRecord({ requestId: 'r1', route: 'calc', httpMethod: 'POST', auth, message: { method: 'tools/call', id: 1, toolName: 't' }, status: 200, latencyMs: 1 }),
      auditRecord({ route: 'calc', httpMethod: 'POST', auth, message: { method: 'resources/read', id: 1, resourceUri: 'file:///a' }, status: 200, latencyMs: 1 }),
      auditRecord({ route: 'calc', httpMethod: 'POST', auth, message: { method: 'prompts/get', id: 1, promptName: 'p' }, status: undefined, latencyMs: 1 }),
    ];
    for (const record of every) {
      for (const [key, value] of Object.entries(record)) {
        expect(SENSITIVE_KEYS.has(key), key).toBe(false);
        expect(typeof value === 'string' || typeof value === 'number', key).toBe(true);
      }
      expect(redactFields(record as unknown as Record<string, unknown>)).toBe(record);
    }
    expect(new Set(every.flatMap((record) => Object.keys(record)))).toEqual(
      new Set(['reqId', 'route', 'http_method', 'outcome', 'latency_ms', 'principal', 'client_id', 'jsonrpc_method', 'tool', 'resource', 'prompt', 'status']),
    );
  });
});
