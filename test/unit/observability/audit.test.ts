import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/decision/ports.js';
import { principalDigest } from '../../../src/cache/cache-keys.js';
import { auditPrincipal, auditRecord, clearPrincipal, MAX_AUDIT_NAME_LENGTH } from '../../../src/observability/audit.js';
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
      }, clearPrincipal),
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
    expect(auditRecord({ route: 'calc', httpMethod: 'POST', auth, message: { method, id: 1, ...facts }, status: 200, latencyMs: 1 }, clearPrincipal)).toMatchObject(expected);
  });

  it('a refused or abandoned request has no principal; a client-chosen name is bounded', () => {
    const refused = auditRecord({ route: 'calc', httpMethod: 'GET', auth: undefined, message: undefined, status: 401, latencyMs: 1 }, clearPrincipal);
    expect(refused).toEqual({ route: 'calc', http_method: 'GET', outcome: '401', status: 401, latency_ms: 1 });
    const gone = auditRecord({ route: 'calc', httpMethod: 'POST', auth: { ...auth, subject: undefined }, message: { method: 'tools/call', id: 1, toolName: 'x'.repeat(5000) }, status: undefined, latencyMs: 1 }, clearPrincipal);
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
    }, clearPrincipal);
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
    }, clearPrincipal);
    expect(Object.keys(full)).toEqual(['route', 'http_method', 'outcome', 'latency_ms', 'principal', 'client_id', 'jsonrpc_method', 'tool', 'resource', 'prompt', 'status']);
  });

  it('H5: the logger may skip redacting it because no key it can have is sensitive and no value is an object', () => {
    const every = [
      auditRecord({ requestId: 'r1', route: 'calc', httpMethod: 'POST', auth, message: { method: 'tools/call', id: 1, toolName: 't' }, status: 200, latencyMs: 1 }, clearPrincipal),
      auditRecord({ route: 'calc', httpMethod: 'POST', auth, message: { method: 'resources/read', id: 1, resourceUri: 'file:///a' }, status: 200, latencyMs: 1 }, clearPrincipal),
      auditRecord({ route: 'calc', httpMethod: 'POST', auth, message: { method: 'prompts/get', id: 1, promptName: 'p' }, status: undefined, latencyMs: 1 }, clearPrincipal),
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

describe('audit principal (log.audit_subject)', () => {
  const key = Buffer.from('k'.repeat(32));
  const facts = { route: 'calc', httpMethod: 'POST', auth, message: undefined, status: 200, latencyMs: 1 } as const;

  it('clear names <issuer>#<subject>', () => {
    expect(auditRecord(facts, auditPrincipal('clear', key)).principal).toBe('https://as.example.com#alice');
  });

  it('hashed writes the keyed principal digest of the grant audit lines, and neither issuer nor subject', () => {
    const line = JSON.stringify(auditRecord(facts, auditPrincipal('hashed', key)));
    const { principal } = JSON.parse(line) as { principal: string };
    expect(principal).toBe(principalDigest(key, 'https://as.example.com', 'alice'));
    expect(principal).toMatch(/^[\w-]{22}$/);
    expect(line).not.toContain('alice');
    expect(line).not.toContain('as.example.com');
  });

  it('hashed is stable across replicas sharing the key and differs under another key (no dictionary without it)', () => {
    const replicaA = auditPrincipal('hashed', Buffer.from(key));
    const replicaB = auditPrincipal('hashed', Buffer.from(key));
    const otherKey = auditPrincipal('hashed', Buffer.from('o'.repeat(32)));
    expect(replicaA(auth)).toBe(replicaB(auth));
    expect(otherKey(auth)).not.toBe(replicaA(auth));
  });

  it.each([
    ['the same subject at another issuer', { ...auth, issuer: 'https://other.example.com' }],
    ['another subject at the same issuer', { ...auth, subject: 'bob' }],
    ['a token without subject', { ...auth, subject: undefined }],
    ['a "#" moved between issuer and subject', { ...auth, issuer: 'https://as.example.com#alice', subject: '' }],
  ])('hashed keeps %s apart', (_case, other) => {
    const hashed = auditPrincipal('hashed', key);
    expect(hashed(other)).not.toBe(hashed(auth));
    expect(hashed(other)).toMatch(/^[\w-]{22}$/);
  });
});
