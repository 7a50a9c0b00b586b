import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compileOrThrow, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { active, inactive, startIntrospectionServer, type TestIntrospectionServer } from '../helpers/introspection-server.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { listenAdmin, sampleValue, scrape } from '../helpers/metrics.js';
import { bodyReader, openEventStream } from '../helpers/sse.js';
import { jsonRpcEcho, startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;
const FILES = `${PUBLIC}/files/mcp`;
const NOTES = `${PUBLIC}/notes/mcp`;
const UPSTREAM_SECRET = 'upstream-secret-CANARY-0b5e';
const INTROSPECTION_SECRET = 'introspection-secret-CANARY-77aa';
const OPAQUE_ACTIVE = 'opaque-active-CANARY-token-4f1c';
const OPAQUE_INACTIVE = 'opaque-inactive-CANARY-token-9d2e';
const CANARY_SUBJECT = 'subject-CANARY-51d0';
const CANARY_CLIENT = 'client-CANARY-3e8a';
const ENV = { CALC_UPSTREAM_TOKEN: UPSTREAM_SECRET, INTROSPECTION_SECRET };

let issuer: TestIssuer;
let calc: TestUpstream;
let files: TestUpstream;
let introspection: TestIntrospectionServer;

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
const callTool = (name: string) => JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: {} } });

function calcRoute(extra = ''): string {
  return `
  - name: calc
    path: /calc/mcp
    upstream:
      url: ${calc.url}
      auth: { type: bearer, token: "\${env:CALC_UPSTREAM_TOKEN}" }
    authorization_servers: [${issuer.issuer}]
    scopes_supported: [mcp:tools, calc:write]
    tokens:
      jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] }
    policy:
      scopes: [mcp:tools]
      tools: { multiply: [calc:write] }
${extra}`;
}

function filesRoute(): string {
  return `
  - name: files
    path: /files/mcp
    upstream: { url: ${files.url} }
    authorization_servers: [${issuer.issuer}]
    tokens:
      introspection: { endpoint: ${introspection.endpoint.href}, client_id: gateway, client_secret: "\${env:INTROSPECTION_SECRET}" }
`;
}

function notesRoute(): string {
  return `
  - name: notes
    path: /notes/mcp
    upstream: { url: ${files.url} }
    authorization_servers: [${issuer.issuer}]
    tokens:
      jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] }
`;
}

function configYaml(routes: string[], top = ''): string {
  return `public_url: ${PUBLIC}\n${top}routes:${routes.join('')}`;
}

function post(base: string, path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  issuer = await startTestIssuer();
  calc = await startTestUpstream();
  files = await startTestUpstream();
  introspection = await startIntrospectionServer();
  introspection.respond((call) =>
    call.token === OPAQUE_ACTIVE
      ? active({ iss: issuer.issuer, sub: CANARY_SUBJECT, client_id: CANARY_CLIENT, aud: [FILES], exp: Math.floor(Date.now() / 1000) + 600 })
      : inactive,
  );
});

afterAll(async () => {
  await Promise.all([calc.close(), files.close(), introspection.close(), issuer.close()]);
});

beforeEach(() => {
  calc.respondWith(jsonRpcEcho);
  files.respondWith(jsonRpcEcho);
});

describe('admin listener and metrics', () => {
  let gw: RunningGateway;
  let admin: string;

  beforeAll(async () => {
    gw = await startGateway(configYaml([calcRoute(), filesRoute()]), { env: ENV });
    admin = await listenAdmin(gw.gateway);
    await gw.gateway.warm();
  });

  afterAll(() => gw.close());

  it('J5 /metrics is served on the admin listener only; the admin listener serves no MCP route', async () => {
    const publicMetrics = await fetch(`${gw.url}/metrics`);
    expect(publicMetrics.status).toBe(404);
    expect(await publicMetrics.text()).not.toContain('mcp_gateway_');
    const adminMetrics = await fetch(`${admin}/metrics`);
    expect(adminMetrics.status).toBe(200);
    expect(adminMetrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await post(admin, '/calc/mcp', initialize, bearer(await issuer.mint({ aud: CALC, scope: 'mcp:tools' })))).status).toBe(404);
  });

  it('health: /healthz and /readyz answer on both listeners', async () => {
    for (const base of [gw.url, admin]) {
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready', routes: { calc: true, files: true } });
    }
  });

  it('H1 metric names and labels after traffic; no token, subject, client id or secret in any label', async () => {
    const canaryJwt = await issuer.mint({ aud: CALC, scope: 'mcp:tools', sub: CANARY_SUBJECT, client_id: CANARY_CLIENT });
    expect((await post(gw.url, '/calc/mcp', callTool('add'), bearer(canaryJwt))).status).toBe(200);
    expect((await post(gw.url, '/calc/mcp', callTool('multiply'), bearer(canaryJwt))).status).toBe(403);
    expect((await post(gw.url, '/calc/mcp', initialize)).status).toBe(401);
    expect((await post(gw.url, '/calc/mcp', initialize, bearer(`${canaryJwt}x`))).status).toBe(401);
    expect((await post(gw.url, `/nope/${CANARY_SUBJECT}`, initialize)).status).toBe(404);
    for (let i = 0; i < 2; i++) {
      expect((await post(gw.url, '/files/mcp', initialize, bearer(OPAQUE_ACTIVE))).status).toBe(200);
      expect((await post(gw.url, '/files/mcp', initialize, bearer(OPAQUE_INACTIVE))).status).toBe(401);
    }
    calc.respondWith((_request, response) => {
      response.statusCode = 500;
      response.end('upstream failure');
    });
    expect((await post(gw.url, '/calc/mcp', initialize, bearer(canaryJwt))).status).toBe(500);

    const { text, samples } = await scrape(admin);
    const requests = (labels: Record<string, string>) => sampleValue(samples, 'mcp_gateway_requests_total', labels);
    expect(requests({ route: 'calc', method: 'POST', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(requests({ route: 'calc', method: 'POST', outcome: '403' })).toBeGreaterThanOrEqual(1);
    expect(requests({ route: 'calc', method: 'POST', outcome: '401' })).toBeGreaterThanOrEqual(2);
    expect(requests({ route: 'calc', method: 'POST', outcome: '5xx' })).toBeGreaterThanOrEqual(1);
    expect(requests({ route: 'unmatched', method: 'POST', outcome: '404' })).toBeGreaterThanOrEqual(1);
    expect(requests({ route: 'files', method: 'POST', outcome: 'ok' })).toBe(2);
    const decisions = (labels: Record<string, string>) => sampleValue(samples, 'mcp_gateway_auth_decision_seconds_count', labels);
    expect(decisions({ route: 'calc', kind: 'jwt', result: 'accepted' })).toBeGreaterThanOrEqual(2);
    expect(decisions({ route: 'calc', kind: 'jwt', result: 'invalid_token' })).toBeGreaterThanOrEqual(1);
    expect(decisions({ route: 'files', kind: 'introspection', result: 'accepted' })).toBe(2);
    expect(decisions({ route: 'files', kind: 'introspection', result: 'invalid_token' })).toBe(2);
    expect(sampleValue(samples, 'mcp_gateway_upstream_request_seconds_count', { route: 'calc', status_class: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'mcp_gateway_upstream_request_seconds_count', { route: 'calc', status_class: '5xx' })).toBeGreaterThanOrEqual(1);
    const cache = (result: string) => sampleValue(samples, 'mcp_gateway_introspection_cache_total', { result });
    expect([cache('miss'), cache('hit'), cache('negative_hit')]).toEqual([2, 1, 1]);
    expect(sampleValue(samples, 'mcp_gateway_introspection_as_requests_total')).toBe(2);
    expect(sampleValue(samples, 'mcp_gateway_jwks_refresh_total', { result: 'success' })).toBeGreaterThanOrEqual(1);
    expect(text).toContain('# TYPE mcp_gateway_jwks_stale_serves_total counter');
    expect(text).toContain('# TYPE mcp_gateway_introspection_as_errors_total counter');
    expect(sampleValue(samples, 'mcp_gateway_config_reloads_total', { result: 'failure' })).toBe(0);
    expect(sampleValue(samples, 'mcp_gateway_sse_streams_open')).toBe(0);
    expect(sampleValue(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);

    const labelValues = new Set(samples.flatMap((sample) => Object.values(sample.labels)));
    for (const secret of [canaryJwt, OPAQUE_ACTIVE, OPAQUE_INACTIVE, CANARY_SUBJECT, CANARY_CLIENT, UPSTREAM_SECRET, INTROSPECTION_SECRET]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain('CANARY');
    expect([...labelValues].filter((value) => value.length > 40)).toEqual([]);
  });

  it('counts open SSE streams', async () => {
    let stream: ServerResponse | undefined;
    calc.respondWith((_request, response) => {
      openEventStream(response, '{"open":true}');
      stream = response;
    });
    const response = await fetch(`${gw.url}/calc/mcp`, { headers: { ...bearer(await issuer.mint({ aud: CALC, scope: 'mcp:tools' })), accept: 'text/event-stream' } });
    const reader = bodyReader(response);
    await reader.until('"open":true');
    expect(sampleValue((await scrape(admin)).samples, 'mcp_gateway_sse_streams_open')).toBe(1);
    stream?.end();
    expect((await reader.rest()).clean).toBe(true);
    expect(sampleValue((await scrape(admin)).samples, 'mcp_gateway_sse_streams_open')).toBe(0);
  });
});

describe('audit log', () => {
  let gw: RunningGateway;

  beforeAll(async () => {
    gw = await startGateway(configYaml([calcRoute(), filesRoute()]), { env: ENV });
  });

  afterAll(() => gw.close());

  const auditLines = () =>
    gw.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'audit');

  it('H1 one line per decision with route, principal, client, operation, outcome and latency — never a token', async () => {
    gw.logs.length = 0;
    const token = await issuer.mint({ aud: CALC, scope: 'mcp:tools', sub: 'alice', client_id: 'ide-1' });
    await post(gw.url, '/calc/mcp', callTool('add'), bearer(token));
    await post(gw.url, '/calc/mcp', callTool('multiply'), bearer(token));
    await post(gw.url, '/calc/mcp', initialize);
    await post(gw.url, '/files/mcp', initialize, bearer(OPAQUE_ACTIVE));
    const lines = auditLines();
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatchObject({
      level: 30,
      route: 'calc',
      principal: `${issuer.issuer}#alice`,
      client_id: 'ide-1',
      http_method: 'POST',
      jsonrpc_method: 'tools/call',
      tool: 'add',
      outcome: 'ok',
      status: 200,
    });
    expect(typeof lines[0]?.latency_ms).toBe('number');
    expect(typeof lines[0]?.reqId).toBe('string');
    expect(lines[1]).toMatchObject({ route: 'calc', tool: 'multiply', outcome: '403', status: 403, principal: `${issuer.issuer}#alice` });
    expect(lines[2]).toMatchObject({ route: 'calc', outcome: '401', status: 401 });
    expect(lines[2]).not.toHaveProperty('principal');
    expect(lines[3]).toMatchObject({ route: 'files', principal: `${issuer.issuer}#${CANARY_SUBJECT}`, client_id: CANARY_CLIENT, jsonrpc_method: 'initialize' });
    const all = gw.logs.join('\n');
    for (const secret of [token, token.split('.')[2]!, OPAQUE_ACTIVE, UPSTREAM_SECRET, INTROSPECTION_SECRET]) {
      expect(all).not.toContain(secret);
    }
  });

  it('no audit line for health, metadata, preflight or unmatched paths', async () => {
    gw.logs.length = 0;
    await fetch(`${gw.url}/healthz`);
    await fetch(`${gw.url}/.well-known/oauth-protected-resource/calc/mcp`);
    await fetch(`${gw.url}/calc/mcp`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    await post(gw.url, '/nope', initialize);
    expect(auditLines()).toEqual([]);
  });
});

describe('hot reload', () => {
  let gw: RunningGateway;
  let admin: string;

  beforeEach(async () => {
    gw = await startGateway(configYaml([calcRoute(), filesRoute()]), { env: ENV });
    admin = await listenAdmin(gw.gateway);
    await gw.gateway.warm();
  });

  afterEach(() => gw.close());

  it('J4 a reload adds a route and removes one: 404 and no PRM for the removed one; a stream on it continues', async () => {
    let stream: ServerResponse | undefined;
    files.respondWith((_request, response) => {
      openEventStream(response, '{"before":true}');
      stream = response;
    });
    const sse = await fetch(`${gw.url}/files/mcp`, { headers: { ...bearer(OPAQUE_ACTIVE), accept: 'text/event-stream' } });
    const reader = bodyReader(sse);
    await reader.until('"before":true');

    await gw.gateway.reload(compileOrThrow(configYaml([calcRoute(), notesRoute()]), ENV));

    files.respondWith(jsonRpcEcho);
    expect((await post(gw.url, '/files/mcp', initialize, bearer(OPAQUE_ACTIVE))).status).toBe(404);
    expect((await fetch(`${gw.url}/.well-known/oauth-protected-resource/files/mcp`)).status).toBe(404);
    const notes = await post(gw.url, '/notes/mcp', initialize, bearer(await issuer.mint({ aud: NOTES })));
    expect(notes.status).toBe(200);
    expect(((await (await fetch(`${gw.url}/.well-known/oauth-protected-resource/notes/mcp`)).json()) as { resource: string }).resource).toBe(NOTES);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);

    stream?.end('id: 2\ndata: {"after":true}\n\n');
    const rest = await reader.rest();
    expect(rest).toMatchObject({ clean: true });
    expect(rest.text).toContain('"after":true');
    expect(sampleValue((await scrape(admin)).samples, 'mcp_gateway_config_reloads_total', { result: 'success' })).toBe(1);
  });

  it('F7 a reload rotating the upstream credential: new requests carry the new one', async () => {
    const token = await issuer.mint({ aud: CALC, scope: 'mcp:tools' });
    await gw.gateway.reload(compileOrThrow(configYaml([calcRoute(), filesRoute()]), { ...ENV, CALC_UPSTREAM_TOKEN: 'rotated-token' }));
    calc.requests.length = 0;
    await post(gw.url, '/calc/mcp', initialize, bearer(token));
    expect(calc.requests[0]?.headers.authorization).toBe('Bearer rotated-token');
  });

  it('a reload lowering limits.max_body_bytes applies to the next request', async () => {
    const token = await issuer.mint({ aud: CALC, scope: 'mcp:tools' });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2000) } });
    expect((await post(gw.url, '/calc/mcp', body, bearer(token))).status).toBe(200);
    await gw.gateway.reload(compileOrThrow(configYaml([calcRoute(), filesRoute()], 'limits: { max_body_bytes: 1024 }\n'), ENV));
    expect((await post(gw.url, '/calc/mcp', body, bearer(token))).status).toBe(413);
    const chunked = await fetch(`${gw.url}/calc/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(token) },
      body: new Blob([body]).stream(),
      duplex: 'half',
    });
    expect(chunked.status).toBe(413);
  });

  it('a reload whose runtime cannot be built is refused: old config keeps serving, failure counted', async () => {
    const broken = compileOrThrow(configYaml([calcRoute(), notesRoute()]), ENV);
    const sabotaged = { ...broken, routes: [...broken.routes, { ...broken.routes[0]!, tokens: { jwt: undefined, introspection: undefined } }] };
    await expect(gw.gateway.reload(sabotaged)).rejects.toThrow();
    expect((await post(gw.url, '/files/mcp', initialize, bearer(OPAQUE_ACTIVE))).status).toBe(200);
    expect((await post(gw.url, '/notes/mcp', initialize, bearer(await issuer.mint({ aud: NOTES })))).status).toBe(404);
    expect(sampleValue((await scrape(admin)).samples, 'mcp_gateway_config_reloads_total', { result: 'failure' })).toBe(1);
  });
});

describe('graceful shutdown', () => {
  it('I11 drain: readiness 503 and new requests 503 at once; GET streams end cleanly; in-flight POST streams finish; then closed', async () => {
    const gw = await startGateway(configYaml([calcRoute()], 'shutdown: { grace_period: 5m }\n'), { env: ENV });
    const admin = await listenAdmin(gw.gateway);
    const token = await issuer.mint({ aud: CALC, scope: 'mcp:tools' });
    let postStream: ServerResponse | undefined;
    let postArrived: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (postArrived = resolve));
    calc.respondWith((request, response) => {
      openEventStream(response, `{"method":"${request.method}"}`);
      if (request.method === 'POST') {
        postStream = response;
        postArrived();
      }
    });

    const standalone = bodyReader(await fetch(`${gw.url}/calc/mcp`, { headers: { ...bearer(token), accept: 'text/event-stream' } }));
    await standalone.until('"method":"GET"');
    const inFlight = bodyReader(await post(gw.url, '/calc/mcp', callTool('add'), bearer(token)));
    await arrived;
    await inFlight.until('"method":"POST"');
    expect(sampleValue((await scrape(admin)).samples, 'mcp_gateway_sse_streams_open')).toBe(2);

    let closed = false;
    const closing = gw.gateway.close().then(() => (closed = true));

    expect(await standalone.rest()).toEqual({ text: 'id: 1\ndata: {"method":"GET"}\n\n', clean: true });
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'draining' });
    // Probes with a query string are still health probes: readiness answers, liveness stays 200.
    const probed = await fetch(`${gw.url}/readyz?probe=kubelet`);
    expect(probed.status).toBe(503);
    expect(await probed.json()).toMatchObject({ status: 'draining' });
    expect((await fetch(`${gw.url}/healthz?probe=kubelet`)).status).toBe(200);
    const refused = await post(gw.url, '/calc/mcp', initialize, bearer(token));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(closed).toBe(false);

    postStream?.end('id: 2\ndata: {"result":"done"}\n\n');
    const finished = await inFlight.rest();
    expect(finished.clean).toBe(true);
    expect(finished.text).toContain('"result":"done"');
    await closing;
    await expect(fetch(`${gw.url}/healthz`)).rejects.toThrow();
    await expect(fetch(`${admin}/healthz`)).rejects.toThrow();
  });
});
