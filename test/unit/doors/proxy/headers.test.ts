import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  FORWARDED_REQUEST_HEADER_PREFIXES,
  FORWARDED_REQUEST_HEADERS,
  upstreamRequestHeaders,
  upstreamResponseHeaders,
} from '../../../../src/doors/proxy/headers.js';

const CREDENTIAL = { authorization: 'Bearer upstream-secret' } as const;
const CLIENT_TOKEN = 'client-token-canary';
/** A route's `upstream.forward_headers`, for the Connection cases. */
const EXTRA: ReadonlySet<string> = new Set(['x-foo', 'x-bar', 'x-a', 'x-b', 'x-c']);

describe('upstreamRequestHeaders', () => {
  it.each([
    ['authorization', `Bearer ${CLIENT_TOKEN}`],
    ['proxy-authorization', `Basic ${CLIENT_TOKEN}`],
    ['cookie', `session=${CLIENT_TOKEN}`],
    ['x-api-key', CLIENT_TOKEN],
  ])('F1 drops the client credential header %s', (name, value) => {
    const headers = upstreamRequestHeaders({ [name]: value, accept: 'application/json' }, {});
    expect(headers).toEqual({ accept: 'application/json' });
    expect(JSON.stringify(headers)).not.toContain(CLIENT_TOKEN);
  });

  it('F1 replaces the client token with the upstream credential', () => {
    const headers = upstreamRequestHeaders({ authorization: `Bearer ${CLIENT_TOKEN}`, cookie: `a=${CLIENT_TOKEN}` }, CREDENTIAL);
    expect(headers).toEqual({ authorization: 'Bearer upstream-secret' });
  });

  it('F1 a header credential is injected lowercased and overrides a client header of the same name', () => {
    const headers = upstreamRequestHeaders({ 'x-upstream-key': 'from-client' }, { 'X-Upstream-Key': 'configured' });
    expect(headers).toEqual({ 'x-upstream-key': 'configured' });
  });

  it.each([
    'X-Forwarded-User',
    'x_forwarded_user',
    'X-FORWARDED-EMAIL',
    'X-Forwarded-Groups',
    'X-Forwarded-Preferred-Username',
    'X-Forwarded-For',
    'X-Forwarded-Host',
    'X-Forwarded-Proto',
    'X-Forwarded-Access-Token',
    'X-Forwarded-Client-Cert',
    'Forwarded',
    'X-Real-IP',
    'X-Auth-Request-User',
    'X-Auth-Request-Email',
    'X-Auth-Request-Access-Token',
    'X-MCP-User',
    'X-User',
    'X-User-Id',
    'X-Email',
    'X-Remote-User',
    'Remote-User',
    'X-Authenticated-User',
    'X-Jwt-Payload',
    'X-Amzn-Oidc-Identity',
    'X-Goog-Authenticated-User-Email',
    'X-MS-CLIENT-PRINCIPAL-NAME',
    'X-SSL-Client-Cert',
    'True-Client-IP',
    'x_auth_request_user',
    'remote_user',
  ])('F3 strips spoofed identity header %s', (name) => {
    const headers = upstreamRequestHeaders({ [name]: 'admin@example.com', 'content-type': 'application/json' }, CREDENTIAL);
    expect(headers).toEqual({ 'content-type': 'application/json', ...CREDENTIAL });
  });

  it('F3 drops every name containing an underscore, including twins of MCP headers', () => {
    const headers = upstreamRequestHeaders({ mcp_session_id: 'victim-session', 'x_custom': '1', 'mcp-session-id': 'mine' }, {});
    expect(headers).toEqual({ 'mcp-session-id': 'mine' });
  });

  it('forwards Mcp-Param-* names with an underscore: they spell a parameter name (issue 12 gap 1)', () => {
    const headers = upstreamRequestHeaders({ 'mcp-param-tenant_id': 'acme', 'mcp-param-region': 'eu', mcp_param_x: '1', 'mcp-session_id': 's' }, {});
    expect(headers).toEqual({ 'mcp-param-tenant_id': 'acme', 'mcp-param-region': 'eu' });
  });

  it('K6 forwards the MCP, content-negotiation and trace headers unchanged', () => {
    const client: IncomingHttpHeaders = {
      accept: 'application/json, text/event-stream',
      'accept-encoding': 'gzip',
      'accept-language': 'de',
      'content-type': 'application/json',
      'mcp-session-id': 'abc-123',
      'mcp-protocol-version': '2025-11-25',
      'mcp-method': 'tools/call',
      'mcp-name': 'add',
      'mcp-param-region': 'eu',
      'last-event-id': 'evt-9',
      'user-agent': 'mcp-client/1.0',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=1',
    };
    expect(upstreamRequestHeaders(client, CREDENTIAL)).toEqual({ ...client, ...CREDENTIAL });
  });

  it.each([
    'X-Authenticated-Userid',
    'X-Original-URL',
    'X-Rewrite-URL',
    'X-Original-URI',
    'X-HTTP-Method-Override',
    'X-HTTP-Method',
    'X-Method-Override',
    'X-Consumer-Username',
    'X-Consumer-ID',
    'X-Credential-Identifier',
    'X-Userinfo',
    'X-Tenant-Id',
    'X-Envoy-Original-Path',
    'X-Envoy-Peer-Metadata',
    'X-Istio-Attributes',
    'X-Pomerium-Jwt-Assertion',
    'X-Kong-Request-Id',
    'Baggage',
    'Origin',
    'Referer',
    'Content-Length',
    'Content-Encoding',
    'Via',
    'Cache-Control',
    'If-None-Match',
    'Range',
    'X-Request-Id',
    'X-Anything-Else',
  ])('K6 drops %s: not on the forwarding allowlist', (name) => {
    const headers = upstreamRequestHeaders({ [name]: 'admin', accept: '*/*' }, CREDENTIAL);
    expect(headers).toEqual({ accept: '*/*', ...CREDENTIAL });
  });

  it('K6 a route\'s forward_headers adds names (lowercase), never underscore twins of them', () => {
    const extra = new Set(['x-mcp-toolsets']);
    const headers = upstreamRequestHeaders({ 'X-MCP-Toolsets': 'repos,issues', x_mcp_toolsets: 'all', 'x-mcp-readonly': '1' }, {}, extra);
    expect(headers).toEqual({ 'x-mcp-toolsets': 'repos,issues' });
  });

  it('K6 the gateway\'s own headers (request id, credential, identity) replace any client value', () => {
    const headers = upstreamRequestHeaders({ 'x-request-id': 'forged', 'x-gateway-identity': 'forged' }, { 'x-request-id': 'req-1', 'x-gateway-identity': 'signed' }, new Set(['x-gateway-identity']));
    expect(headers).toEqual({ 'x-request-id': 'req-1', 'x-gateway-identity': 'signed' });
  });

  it.each(['Connection', 'Keep-Alive', 'Proxy-Connection', 'TE', 'Trailer', 'Transfer-Encoding', 'Upgrade', 'HTTP2-Settings', 'Host', 'Expect'])(
    'drops hop-by-hop / proxy-owned header %s',
    (name) => {
      expect(upstreamRequestHeaders({ [name]: 'x', accept: '*/*' }, {})).toEqual({ accept: '*/*' });
    },
  );

  it('Connection: authorization, x-foo cannot remove the injected authorization but does remove x-foo', () => {
    const headers = upstreamRequestHeaders(
      { connection: 'authorization, X-Foo', 'x-foo': 'bar', 'x-bar': 'kept', authorization: `Bearer ${CLIENT_TOKEN}` },
      CREDENTIAL,
      EXTRA,
    );
    expect(headers).toEqual({ 'x-bar': 'kept', ...CREDENTIAL });
  });

  it('Connection naming a header credential cannot remove it either', () => {
    const headers = upstreamRequestHeaders({ connection: 'x-upstream-key' }, { 'x-upstream-key': 'configured' });
    expect(headers).toEqual({ 'x-upstream-key': 'configured' });
  });

  it('Connection given as several values removes every nominated header', () => {
    const headers = upstreamRequestHeaders({ connection: ['x-a', ' x-b ,'], 'x-a': '1', 'x-b': '2', 'x-c': '3' }, {}, EXTRA);
    expect(headers).toEqual({ 'x-c': '3' });
  });

  it('Connection tokens are trimmed, case-insensitive, and empty ones nominate nothing', () => {
    const headers = upstreamRequestHeaders({ connection: ' , X-A ,,\tx-b\t, ', 'x-a': '1', 'x-b': '2', 'x-c': '3' }, {}, EXTRA);
    expect(headers).toEqual({ 'x-c': '3' });
  });

  it('a request without Connection is not affected by an earlier one that had it', () => {
    expect(upstreamRequestHeaders({ connection: 'x-foo', 'x-foo': 'a', 'x-bar': 'b' }, {}, EXTRA)).toEqual({ 'x-bar': 'b' });
    expect(upstreamRequestHeaders({ 'x-foo': 'a', 'x-bar': 'b' }, {}, EXTRA)).toEqual({ 'x-foo': 'a', 'x-bar': 'b' });
  });

  it('keeps multi-valued headers and skips undefined values', () => {
    expect(upstreamRequestHeaders({ 'x-multi': ['a', 'b'], 'x-none': undefined }, {}, new Set(['x-multi', 'x-none']))).toEqual({ 'x-multi': ['a', 'b'] });
  });

  it('documents what it forwards: every exported name and prefix actually passes', () => {
    const names = [...FORWARDED_REQUEST_HEADERS, ...FORWARDED_REQUEST_HEADER_PREFIXES.map((prefix) => `${prefix}probe`)];
    const probe: Record<string, string> = Object.fromEntries(names.map((name) => [name, 'x']));
    expect(upstreamRequestHeaders(probe, {})).toEqual(probe);
  });
});

describe('upstreamResponseHeaders', () => {
  it('F5 drops the upstream challenge and proxy challenge', () => {
    const headers = upstreamResponseHeaders({
      'www-authenticate': 'Bearer resource_metadata="https://evil.example/.well-known/oauth-protected-resource"',
      'proxy-authenticate': 'Basic realm="x"',
      'content-type': 'application/json',
    });
    expect(headers).toEqual({ 'content-type': 'application/json' });
  });

  it.each([
    ['set-cookie', ['sid=1; Path=/', 'b=2']],
    ['alt-svc', 'h3=":443"; ma=86400'],
    ['access-control-allow-origin', '*'],
    ['access-control-allow-credentials', 'true'],
    ['connection', 'close'],
    ['keep-alive', 'timeout=5'],
    ['transfer-encoding', 'chunked'],
    ['upgrade', 'h2c'],
    ['trailer', 'x-checksum'],
  ])('drops %s', (name, value) => {
    expect(upstreamResponseHeaders({ [name]: value, 'cache-control': 'no-cache' })).toEqual({ 'cache-control': 'no-cache' });
  });

  it('drops headers the upstream nominated in Connection and keeps MCP headers', () => {
    const headers = upstreamResponseHeaders({
      connection: 'x-internal',
      'x-internal': 'debug',
      'mcp-session-id': 'abc',
      'content-type': 'text/event-stream',
      'content-length': '10',
    });
    expect(headers).toEqual({ 'mcp-session-id': 'abc', 'content-type': 'text/event-stream', 'content-length': '10' });
  });
});

describe('upstreamResponseHeaders and Connection', () => {
  it('without Connection, keeps every header that is not on the strip lists', () => {
    const upstream = { 'content-type': 'application/json', 'mcp-session-id': 'abc', 'x-custom': ['1', '2'], 'cache-control': 'no-cache' };
    expect(upstreamResponseHeaders(upstream)).toEqual(upstream);
  });

  it('Connection given as several values removes every nominated header, and itself', () => {
    const headers = upstreamResponseHeaders({ connection: ['X-A, keep-alive', 'x-b'], 'x-a': '1', 'x-b': '2', 'keep-alive': 'timeout=5', 'x-c': '3' });
    expect(headers).toEqual({ 'x-c': '3' });
  });

  it('skips undefined values', () => {
    expect(upstreamResponseHeaders({ 'content-type': 'text/plain', 'x-none': undefined })).toEqual({ 'content-type': 'text/plain' });
  });
});

describe('upstreamRequestHeaders sent by undici to a real upstream', () => {
  it('F1/F3 undici accepts the result; the upstream sees the credential, not the client token, spoofed identity or Connection-nominated headers', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const upstream = createServer((request, response) => {
      seen.push(request.headers);
      response.end('{}');
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const { port } = upstream.address() as AddressInfo;
    // What node hands the gateway for a hostile client, hop-by-hop headers undici would refuse included.
    const clientHeaders = {
      host: 'gw.example.test',
      authorization: `Bearer ${CLIENT_TOKEN}`,
      connection: 'authorization, x-foo',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      expect: '100-continue',
      upgrade: 'websocket',
      'x-foo': 'bar',
      'x-forwarded-user': 'admin',
      x_forwarded_user: 'admin',
      'mcp-session-id': 'sess-1',
      cookie: `c=${CLIENT_TOKEN}`,
    };
    try {
      const response = await request(`http://127.0.0.1:${port}/mcp`, { headers: upstreamRequestHeaders(clientHeaders, CREDENTIAL) });
      expect(response.statusCode).toBe(200);
      await response.body.dump();
      expect(seen).toHaveLength(1);
      const received = seen[0] ?? {};
      expect(received.authorization).toBe('Bearer upstream-secret');
      expect(received['mcp-session-id']).toBe('sess-1');
      expect(received.host).toBe(`127.0.0.1:${port}`);
      for (const name of ['x-foo', 'x-forwarded-user', 'x_forwarded_user', 'cookie', 'upgrade', 'expect']) expect(received[name]).toBeUndefined();
      expect(JSON.stringify(received)).not.toContain(CLIENT_TOKEN);
    } finally {
      upstream.close();
    }
  });
});
