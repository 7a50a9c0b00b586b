import { describe, expect, it } from 'vitest';
import { judge, type AuditLine, type Evidence, type Exchange } from './evidence.js';

function exchange(server: Exchange['server'], method: string, path: string, status: number, extra: Partial<Exchange> = {}): Exchange {
  return { server, method, path, query: {}, status, contentType: 'application/json', sentSessionId: false, issuedSessionId: false, ...extra };
}
const gateway = (method: string, path: string, status: number, extra: Partial<Exchange> = {}) => exchange('gateway', method, path, status, extra);
const as = (method: string, path: string, status: number, extra: Partial<Exchange> = {}) => exchange('authorization-server', method, path, status, extra);
const authorize = (scope: string, extra: Record<string, string> = {}) =>
  as('GET', '/auth', 303, { query: { client_id: 'c1', scope, code_challenge: 'x', code_challenge_method: 'S256', ...extra } });
const call = (tool: string, status: number): AuditLine => ({ jsonrpc_method: 'tools/call', tool, status });

/** The demo flow of a client that steps up, as the observer and the audit log record it. */
const STEP_UP_FLOW: Evidence = {
  exchanges: [
    gateway('POST', '/calc/mcp', 401),
    gateway('GET', '/.well-known/oauth-protected-resource/calc/mcp', 200),
    as('GET', '/.well-known/oauth-authorization-server', 200),
    as('POST', '/reg', 201),
    authorize('mcp:tools'),
    as('GET', '/auth/uid', 303),
    as('POST', '/token', 200),
    gateway('POST', '/calc/mcp', 200, { contentType: 'text/event-stream', issuedSessionId: true }),
    gateway('GET', '/calc/mcp', 200, { contentType: 'text/event-stream', sentSessionId: true }),
    gateway('POST', '/calc/mcp', 403, { sentSessionId: true }),
    authorize('mcp:tools calc:write'),
    as('POST', '/token', 200),
    gateway('POST', '/calc/mcp', 200, { contentType: 'text/event-stream', sentSessionId: true }),
  ],
  audit: [call('add', 200), call('multiply', 403), call('multiply', 200)],
  results: { added: true, multiplied: true },
};

describe('judging one client run', () => {
  it('a client that does everything passes every cell', () => {
    expect(judge(STEP_UP_FLOW)).toEqual({
      discovery: { verdict: 'pass' },
      registration: { verdict: 'pass', detail: 'DCR' },
      pkce: { verdict: 'pass' },
      token: { verdict: 'pass' },
      'tools/call': { verdict: 'pass' },
      'step-up': { verdict: 'pass' },
      sse: { verdict: 'pass', detail: 'GET + POST' },
      session: { verdict: 'pass' },
    });
  });

  it('registration by Client ID Metadata Document: the client_id is a URL, no /reg', () => {
    const exchanges = STEP_UP_FLOW.exchanges
      .filter((e) => e.path !== '/reg')
      .map((e) => (e.path === '/auth' ? { ...e, query: { ...e.query, client_id: 'http://127.0.0.1:9/client.json' } } : e));
    expect(judge({ ...STEP_UP_FLOW, exchanges }).registration).toEqual({ verdict: 'pass', detail: 'CIMD' });
  });

  it('a registration the client never used (a page that could not read the answer) does not count', () => {
    const exchanges = STEP_UP_FLOW.exchanges.filter((e) => e.path !== '/auth');
    expect(judge({ ...STEP_UP_FLOW, exchanges }).registration).toEqual({ verdict: 'fail', detail: 'registered, never authorized' });
  });

  it('a client that asked for every scope at first never meets the 403: step-up is not applicable', () => {
    expect(judge({ ...STEP_UP_FLOW, audit: [call('add', 200), call('multiply', 200)] })['step-up']).toEqual({
      verdict: 'n.a.',
      detail: 'scope held from the start',
    });
  });

  it('a client that answers the 403 without authorizing for the challenged scope (a refresh) fails step-up', () => {
    const exchanges = STEP_UP_FLOW.exchanges.filter((e) => e.query.scope !== 'mcp:tools calc:write');
    const evidence = { exchanges, audit: [call('add', 200), call('multiply', 403), call('multiply', 403)], results: { added: true, multiplied: false } };
    expect(judge(evidence)['step-up']).toEqual({ verdict: 'fail', detail: 'did not authorize again for the challenged scope' });
  });

  it.each<[string, Partial<Evidence>, keyof ReturnType<typeof judge>, string]>([
    ['no protected resource metadata', { exchanges: STEP_UP_FLOW.exchanges.filter((e) => !e.path.startsWith('/.well-known/oauth-protected')) }, 'discovery', 'fail'],
    ['a plain PKCE challenge', { exchanges: [...STEP_UP_FLOW.exchanges, authorize('mcp:tools', { code_challenge_method: 'plain' })] }, 'pkce', 'fail'],
    ['no token', { exchanges: STEP_UP_FLOW.exchanges.filter((e) => e.path !== '/token') }, 'token', 'fail'],
    ['add answered wrongly on screen', { results: { added: false, multiplied: true } }, 'tools/call', 'fail'],
    ['no streamed answer', { exchanges: STEP_UP_FLOW.exchanges.map((e) => ({ ...e, contentType: 'application/json' })) }, 'sse', 'fail'],
    ['the session id never sent back', { exchanges: STEP_UP_FLOW.exchanges.map((e) => ({ ...e, sentSessionId: false })) }, 'session', 'fail'],
  ])('%s → %s fails', (_name, change, column, verdict) => {
    expect(judge({ ...STEP_UP_FLOW, ...change })[column].verdict).toBe(verdict);
  });
});
