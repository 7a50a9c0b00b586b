import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { principalDigest } from '../../src/cache/cache-keys.js';
import { assembleGateway } from '../../src/gateway/assemble.js';
import type { Gateway } from '../../src/gateway/build.js';
import { startTracing, type GatewayTracing } from '../../src/gateway/tracing.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { compileOrThrow } from '../helpers/gateway.js';
import { active, json, startIntrospectionServer, type TestIntrospectionServer } from '../helpers/introspection-server.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { eventually } from '../helpers/poll.js';
import { startRedis, uniquePrefix, type RedisHandle } from '../helpers/redis.js';
import { jsonRpcEcho, neverAnswering, startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

/**
 * OpenTelemetry tracing against a real OTLP/HTTP receiver (test/helpers/otlp-receiver.ts decodes what the gateway
 * exports): the request's span under the client's traceparent, the decision's steps, the child spans of every call
 * the gateway makes (JWKS, token endpoint, introspection, Redis, upstream), the traceparent the upstream receives,
 * the MCP message's own `_meta.traceparent`, the decision listener joining the proxy's trace, and no token, secret
 * or raw subject in anything exported.
 */

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;
const FILES = `${PUBLIC}/files/mcp`;
const SUBJECT = 'tracing-subject-canary-4f1';
const CLIENT_SECRET = 'token-endpoint-secret-canary-7d2';
const INTROSPECTION_SECRET = 'introspection-secret-canary-9e3';
const CACHE_KEY = 'tracing-cache-key-canary-'.padEnd(40, 'k');
const COLLECTOR_KEY = 'collector-key-canary-2b8';
const UPSTREAM_TOKEN = 'upstream-access-token-canary-1a6';
const OPAQUE_TOKEN = 'opaque-token-canary-5c4';
const SERVER = 2;
const CLIENT = 3;

const env = {
  CLIENT_SECRET,
  INTROSPECTION_SECRET,
  CACHE_KEY,
  COLLECTOR_KEY,
};

let receiver: OtlpReceiver;
let issuer: TestIssuer;
let upstream: TestUpstream;
let authServer: TestIntrospectionServer;
let redis: RedisHandle;
let tracing: GatewayTracing;
let gateway: Gateway;
let gatewayUrl: string;
let decisionUrl: string;
const minted: string[] = [];

function configYaml(): string {
  return `
public_url: ${PUBLIC}
decision: { port: 0, proxy: traefik, unauthenticated: true }
cache: { redis_url: ${redis.url}, key_prefix: "${uniquePrefix('tracing')}", key_secret: "\${env:CACHE_KEY}" }
telemetry:
  traces:
    otlp_endpoint: ${receiver.url}
    headers: { x-collector-key: "\${env:COLLECTOR_KEY}" }
routes:
  - name: calc
    path: /calc/mcp
    upstream:
      url: ${upstream.url}
      auth: { type: client_credentials, token_endpoint: ${authServer.endpoint.origin}/token, client_id: gateway, client_secret: "\${env:CLIENT_SECRET}" }
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
  - name: files
    path: /files/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${issuer.issuer}]
    tokens:
      introspection: { endpoint: ${authServer.endpoint.origin}/introspect, client_id: gateway, client_secret: "\${env:INTROSPECTION_SECRET}" }
`;
}

beforeAll(async () => {
  [receiver, issuer, upstream, authServer, redis] = await Promise.all([
    startOtlpReceiver(),
    startTestIssuer(),
    startTestUpstream(),
    startIntrospectionServer(),
    startRedis(),
  ]);
  // One server plays the token endpoint (client credentials) and the introspection endpoint.
  authServer.respond((call) =>
    call.form.get('grant_type') === 'client_credentials'
      ? json({ access_token: UPSTREAM_TOKEN, token_type: 'Bearer', expires_in: 300 })
      : active({ iss: issuer.issuer, sub: SUBJECT, client_id: 'client-1', aud: [FILES], exp: Math.floor(Date.now() / 1000) + 600 }),
  );
  const config = compileOrThrow(configYaml(), env);
  const { logger } = captureLogs();
  if (!config.telemetry.traces) throw new Error('telemetry.traces not compiled');
  tracing = await startTracing(config.telemetry.traces, logger);
  gateway = assembleGateway(config, { logger, tracing });
  await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  gatewayUrl = `http://127.0.0.1:${(gateway.app.server.address() as AddressInfo).port}`;
  if (!gateway.decision) throw new Error('decision listener not built');
  await gateway.decision.listen({ host: '127.0.0.1', port: 0 });
  decisionUrl = `http://127.0.0.1:${(gateway.decision.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([receiver?.close(), issuer?.close(), upstream?.close(), authServer?.close(), redis?.stop()]);
});

const hex = (length: number, digit: string) => digit.repeat(length);

async function bearer(aud: string): Promise<string> {
  const token = await issuer.mint({ aud, sub: SUBJECT });
  minted.push(token);
  return token;
}

/**
 * The test's own requests go through node:http: in this process the gateway's undici instrumentation would trace a
 * fetch() and add a traceparent of its own to the one the test sets.
 */
function send(url: string, options: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: options.method, headers: options.headers }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

function post(path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number }> {
  return send(`${gatewayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

/** The spans of `traceId` once `ready` holds for them (exports are flushed between looks). */
function traceOf(traceId: string, ready: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  return eventually(
    `the spans of trace ${traceId}`,
    () => {
      const spans = receiver.spans().filter((span) => span.traceId === traceId);
      return Promise.resolve(ready(spans) ? spans : undefined);
    },
    { step: () => tracing.provider.forceFlush(), attempts: 100, intervalMs: 20, context: () => JSON.stringify(receiver.spans().map((span) => [span.name, span.traceId.slice(0, 6), span.spanId.slice(0, 6), span.parentSpanId?.slice(0, 6)])) },
  );
}

function only(spans: readonly ReceivedSpan[], match: (span: ReceivedSpan) => boolean, what: string): ReceivedSpan {
  const found = spans.filter(match);
  if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.length}: ${JSON.stringify(spans.map((span) => span.name))}`);
  return found[0] as ReceivedSpan;
}

/** The W3C traceparent header's parts. */
function parseTraceparent(value: string | string[] | undefined): { traceId: string; parentId: string } {
  expect(typeof value).toBe('string');
  const [, traceId = '', parentId = ''] = (value as string).split('-');
  return { traceId, parentId };
}

const isRequestSpan = (span: ReceivedSpan) => span.kind === SERVER && span.attributes['mcp_gateway.route'] !== undefined;
const toUpstream = (span: ReceivedSpan) => span.kind === CLIENT && span.attributes['url.full'] === upstream.url;

describe('tracing through the proxy', () => {
  it("the request's span continues the client's traceparent and records the decision's steps and verdict", async () => {
    const traceId = hex(32, 'a');
    const clientSpan = hex(16, 'b');
    upstream.requests.length = 0;
    const response = await post('/calc/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: {} } }, {
      authorization: `Bearer ${await bearer(CALC)}`,
      traceparent: `00-${traceId}-${clientSpan}-01`,
      tracestate: 'vendor=opaque',
    });
    expect(response.status).toBe(200);

    const spans = await traceOf(traceId, (found) => found.some(isRequestSpan) && found.some(toUpstream));
    const request = only(spans, isRequestSpan, 'request span');
    expect(request.parentSpanId).toBe(clientSpan);
    expect(request.name).toBe('POST /calc/mcp');
    expect(request.attributes).toMatchObject({
      'mcp_gateway.route': 'calc',
      'http.route': '/calc/mcp',
      'http.response.status_code': 200,
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'add',
      'mcp_gateway.decision': 'allowed',
      'mcp_gateway.principal': principalDigest(Buffer.from(CACHE_KEY), issuer.issuer, SUBJECT),
      'url.path': '/calc/mcp',
    });
    expect(request.events).toEqual([
      'route', 'origin', 'preflight', 'token', 'method', 'route scopes', 'rate limit', 'session',
      'message', 'operation scopes', 'upstream headers', 'stream or request slot',
    ]);
    expect(request.resource).toMatchObject({
      'service.name': 'mcp-auth-gateway',
      'service.version': (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version,
    });
  });

  it('the JWKS fetch, the client-credentials token request and the upstream call are child spans of the request', async () => {
    // The first request of the file fetched the JWKS and the upstream token: all in the first trace. The proxy door
    // runs both stages in the request's span (the token request comes after the body was read).
    const spans = await traceOf(hex(32, 'a'), (found) => found.some(toUpstream));
    const request = only(spans, isRequestSpan, 'request span');
    const jwks = only(spans, (span) => span.kind === CLIENT && span.attributes['url.full'] === issuer.jwksUri, 'JWKS fetch');
    expect(jwks.parentSpanId).toBe(request.spanId);
    const token = only(spans, (span) => span.kind === CLIENT && span.attributes['url.full'] === `${authServer.endpoint.origin}/token`, 'token request');
    expect(token.parentSpanId).toBe(request.spanId);
    expect(token.attributes['http.request.method']).toBe('POST');
    expect(only(spans, toUpstream, 'upstream call').parentSpanId).toBe(request.spanId);
  });

  it("the upstream receives one traceparent: the client's trace, the gateway's upstream span, and the client's tracestate", async () => {
    const spans = await traceOf(hex(32, 'a'), (found) => found.some(toUpstream));
    const [received] = upstream.requests;
    const headerCount = (received?.rawHeaders ?? []).filter((name, index) => index % 2 === 0 && name.toLowerCase() === 'traceparent').length;
    expect(headerCount).toBe(1);
    const { traceId, parentId } = parseTraceparent(received?.headers.traceparent);
    expect(traceId).toBe(hex(32, 'a'));
    expect(parentId).toBe(only(spans, toUpstream, 'upstream call').spanId);
    expect(received?.headers.tracestate).toBe('vendor=opaque');
  });

  it("an MCP message's _meta.traceparent (SEP-414) parents the upstream call, linked to the request's span", async () => {
    const metaTrace = hex(32, 'c');
    const metaParent = hex(16, 'd');
    upstream.requests.length = 0;
    const response = await post(
      '/calc/mcp',
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', _meta: { traceparent: `00-${metaTrace}-${metaParent}-01` } } },
      { authorization: `Bearer ${await bearer(CALC)}` },
    );
    expect(response.status).toBe(200);
    const spans = await traceOf(metaTrace, (found) => found.some(toUpstream) && found.some((span) => span.name === 'tools/call add'));
    const message = only(spans, (span) => span.name === 'tools/call add', 'message span');
    expect(message.parentSpanId).toBe(metaParent);
    expect(message.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'add' });
    const call = only(spans, toUpstream, 'upstream call');
    expect(call.parentSpanId).toBe(message.spanId);
    const { traceId, parentId } = parseTraceparent(upstream.requests[0]?.headers.traceparent);
    expect([traceId, parentId]).toEqual([metaTrace, call.spanId]);
    // The request itself (no traceparent header) started its own trace, which the message span links to.
    const [link] = message.links;
    const request = receiver.spans().find((span) => span.spanId === link?.spanId);
    expect(request && isRequestSpan(request)).toBe(true);
    expect(request?.traceId).not.toBe(metaTrace);
  });

  it('a malformed traceparent, in the header or in _meta, is ignored: the gateway starts its own trace', async () => {
    upstream.requests.length = 0;
    const response = await post(
      '/calc/mcp',
      { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'add', _meta: { traceparent: `00-${hex(32, '0')}-${hex(16, '7')}-01` } } },
      { authorization: `Bearer ${await bearer(CALC)}`, traceparent: 'not-a-traceparent' },
    );
    expect(response.status).toBe(200);
    const { traceId, parentId } = parseTraceparent(upstream.requests[0]?.headers.traceparent);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe(hex(32, '0'));
    const spans = await traceOf(traceId, (found) => found.some(isRequestSpan) && found.some(toUpstream));
    expect(only(spans, isRequestSpan, 'request span').parentSpanId).toBeUndefined();
    expect(only(spans, toUpstream, 'upstream call').spanId).toBe(parentId);
    expect(spans.some((span) => span.name === 'tools/call add')).toBe(false);
  });

  it('introspection and the Redis commands of its cache are child spans of the request', async () => {
    const traceId = hex(32, 'e');
    minted.push(OPAQUE_TOKEN);
    const response = await post('/files/mcp', { jsonrpc: '2.0', id: 3, method: 'tools/list' }, {
      authorization: `Bearer ${OPAQUE_TOKEN}`,
      traceparent: `00-${traceId}-${hex(16, 'f')}-01`,
    });
    expect(response.status).toBe(200);
    const spans = await traceOf(traceId, (found) => found.some(isRequestSpan) && found.some((span) => span.attributes['db.system.name'] === 'redis'));
    const request = only(spans, isRequestSpan, 'request span');
    const introspection = only(spans, (span) => span.attributes['url.full'] === `${authServer.endpoint.origin}/introspect`, 'introspection');
    expect(introspection.parentSpanId).toBe(request.spanId);
    const redisSpans = spans.filter((span) => span.attributes['db.system.name'] === 'redis');
    expect(redisSpans.length).toBeGreaterThan(0);
    for (const span of redisSpans) {
      expect(span.kind).toBe(CLIENT);
      expect(span.attributes['db.operation.name']).toBe(span.name);
    }
    expect(request.attributes).toMatchObject({ 'mcp_gateway.route': 'files', 'mcp.method.name': 'tools/list', 'mcp_gateway.decision': 'allowed' });
  });

  it("a refusal names its code as the decision and the error type; the refusing step is the span's last event", async () => {
    const traceId = hex(32, '1');
    const response = await post('/calc/mcp', { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { traceparent: `00-${traceId}-${hex(16, '2')}-01` });
    expect(response.status).toBe(401);
    const spans = await traceOf(traceId, (found) => found.some(isRequestSpan));
    const request = only(spans, isRequestSpan, 'request span');
    expect(request.attributes).toMatchObject({ 'mcp_gateway.decision': 'missing_token', 'error.type': 'missing_token', 'http.response.status_code': 401 });
    expect(request.events.at(-1)).toBe('token');
  });

  it("a query on a route's path is not recorded: the proxy door's span names the path alone", async () => {
    const canary = 'query-token-canary-5d1';
    minted.push(canary);
    const traceId = hex(32, '6');
    const response = await post(`/calc/mcp?access_token=${canary}`, { jsonrpc: '2.0', id: 7, method: 'tools/list' }, { traceparent: `00-${traceId}-${hex(16, '7')}-01` });
    // A token in the query is refused (RFC 6750 §2.3 is not supported); its span is still recorded.
    expect(response.status).toBe(400);
    const request = only(await traceOf(traceId, (found) => found.some(isRequestSpan)), isRequestSpan, 'request span');
    expect(request.name).toBe('POST /calc/mcp');
    expect(request.attributes).toMatchObject({ 'url.path': '/calc/mcp', 'http.route': '/calc/mcp', 'http.request.method': 'POST' });
  });

  it('a client gone before any answer exports no request span; the message span it opened still ends', async () => {
    const requestTrace = hex(32, 'c');
    const messageTrace = hex(32, 'd');
    const { reached, closed } = neverAnswering(upstream);
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'add', _meta: { traceparent: `00-${messageTrace}-${hex(16, 'e')}-01` } } });
      const outgoing = httpRequest(`${gatewayUrl}/calc/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${await bearer(CALC)}`,
          traceparent: `00-${requestTrace}-${hex(16, 'f')}-01`,
        },
      });
      outgoing.on('error', () => undefined);
      outgoing.end(body);
      await reached;
      outgoing.destroy();
      await closed;
      // Both spans end (or not) on the same response's close, the request span's listener first: once the message
      // span is exported, a request span would have been too.
      await traceOf(messageTrace, (found) => found.some((span) => span.name === 'tools/call add'));
      await tracing.provider.forceFlush();
      expect(receiver.spans().filter((span) => span.traceId === requestTrace && isRequestSpan(span))).toEqual([]);
    } finally {
      upstream.respondWith(jsonRpcEcho);
    }
  });

  it("an unsampled caller's trace is not recorded, yet continues to the upstream", async () => {
    const traceId = hex(32, '3');
    upstream.requests.length = 0;
    const response = await post('/calc/mcp', { jsonrpc: '2.0', id: 5, method: 'tools/list' }, {
      authorization: `Bearer ${await bearer(CALC)}`,
      traceparent: `00-${traceId}-${hex(16, '4')}-00`,
    });
    expect(response.status).toBe(200);
    expect(parseTraceparent(upstream.requests[0]?.headers.traceparent).traceId).toBe(traceId);
    await tracing.provider.forceFlush();
    expect(receiver.spans().filter((span) => span.traceId === traceId)).toEqual([]);
  });
});

describe('tracing the other pages', () => {
  it("an authorization code in a consent callback's query is not recorded: url.path is the path alone", async () => {
    const code = 'authorization-code-canary-8f0';
    minted.push(code);
    const traceId = hex(32, '8');
    await send(`${gatewayUrl}/consent/callback?code=${code}&state=s`, { method: 'GET', headers: { traceparent: `00-${traceId}-${hex(16, '9')}-01` } });
    const [span] = await traceOf(traceId, (found) => found.length > 0);
    expect(span?.attributes['url.path']).toBe('/consent/callback');
  });
});

describe('tracing through the decision listener', () => {
  it("a question joins the trace of the request the proxy holds (its traceparent) and records the verdict", async () => {
    const traceId = hex(32, '5');
    const proxySpan = hex(16, '6');
    const verdict = await send(`${decisionUrl}/`, {
      method: 'GET',
      headers: {
        authorization: `Bearer ${await bearer(CALC)}`,
        'x-forwarded-method': 'GET',
        'x-forwarded-uri': '/calc/mcp',
        'x-forwarded-host': 'gw.example.test',
        traceparent: `00-${traceId}-${proxySpan}-01`,
      },
    });
    expect(verdict.status).toBe(200);
    const spans = await traceOf(traceId, (found) => found.some(isRequestSpan));
    const question = only(spans, isRequestSpan, 'question span');
    expect(question.parentSpanId).toBe(proxySpan);
    expect(question.attributes).toMatchObject({
      'mcp_gateway.route': 'calc',
      'mcp_gateway.decision': 'allowed',
      'mcp_gateway.principal': principalDigest(Buffer.from(CACHE_KEY), issuer.issuer, SUBJECT),
      'http.response.status_code': 200,
    });
    expect(question.events).toContain('token');
  });
});

describe('what the gateway exports', () => {
  it('carries the export headers from their secret references', () => {
    expect(receiver.exports.length).toBeGreaterThan(0);
    for (const sent of receiver.exports) {
      expect(sent.path).toBe('/v1/traces');
      expect(sent.headers['x-collector-key']).toBe(COLLECTOR_KEY);
    }
  });

  it('holds no token, secret or raw subject in any span, attribute, event or link', async () => {
    await tracing.provider.forceFlush();
    const exported = receiver.exports.map((sent) => sent.body).join('\n');
    const canaries = [...minted, SUBJECT, CLIENT_SECRET, INTROSPECTION_SECRET, CACHE_KEY, COLLECTOR_KEY, UPSTREAM_TOKEN];
    expect(minted.length).toBeGreaterThan(3);
    for (const canary of canaries) {
      for (const form of [canary, encodeURIComponent(canary), Buffer.from(canary).toString('base64')]) expect(exported).not.toContain(form);
    }
  });
});
