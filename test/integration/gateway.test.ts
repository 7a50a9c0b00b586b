import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { rawRequest } from '../helpers/raw-http.js';
import { jsonRpcEcho, neverAnswering, startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;
const FILES = `${PUBLIC}/files/mcp`;
const CALC_PRM = `${PUBLIC}/.well-known/oauth-protected-resource/calc/mcp`;
const UPSTREAM_SECRET = 'upstream-canary-secret-7f3a';

let issuer: TestIssuer;
let calc: TestUpstream;
let files: TestUpstream;
let gw: RunningGateway;

function configYaml(): string {
  return `
public_url: ${PUBLIC}
routes:
  - name: calc
    path: /calc/mcp
    default: true
    resource_name: Calculator
    upstream:
      url: ${calc.url}
      auth: { type: bearer, token: "\${env:CALC_UPSTREAM_TOKEN}" }
      timeouts: { headers: 2s }
    authorization_servers: [${issuer.issuer}]
    scopes_supported: [mcp:tools, calc:write]
    tokens:
      jwt: { issuer: ${issuer.issuer}, algorithms: [ES256], jwks_stale_window: 0s }
    policy:
      scopes: [mcp:tools]
      tools: { multiply: [calc:write] }
  - name: files
    path: /files/mcp
    upstream: { url: ${files.url} }
    authorization_servers: [${issuer.issuer}]
    scopes_supported: [files:read]
    cors: { allowed_origins: ["https://app.example.test"] }
    tokens:
      jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] }
    policy: { scopes: [files:read] }
`;
}

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
const callTool = (name: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: { a: 1, b: 2 } } });

function post(path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

async function calcToken(scope = 'mcp:tools', extra: Record<string, unknown> = {}): Promise<string> {
  return issuer.mint({ aud: CALC, scope, ...extra });
}

beforeAll(async () => {
  issuer = await startTestIssuer();
  calc = await startTestUpstream();
  files = await startTestUpstream();
  gw = await startGateway(configYaml(), { env: { CALC_UPSTREAM_TOKEN: UPSTREAM_SECRET } });
});

afterAll(async () => {
  await gw.close();
  await Promise.all([calc.close(), files.close(), issuer.close()]);
});

beforeEach(() => {
  calc.requests.length = 0;
  files.requests.length = 0;
  calc.respondWith(jsonRpcEcho);
  issuer.setJwksDown(false);
});

describe('protected resource metadata', () => {
  it('E4 serves the route document at path shape A, unauthenticated, with CORS and Cache-Control', async () => {
    const response = await fetch(`${gw.url}/.well-known/oauth-protected-resource/calc/mcp`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect(await response.json()).toEqual({
      resource: CALC,
      authorization_servers: [issuer.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp:tools', 'calc:write'],
      resource_name: 'Calculator',
    });
  });

  it('serves the default route at the root (shape B) and answers HEAD', async () => {
    const root = await fetch(`${gw.url}/.well-known/oauth-protected-resource`);
    expect(((await root.json()) as { resource: string }).resource).toBe(CALC);
    const head = await fetch(`${gw.url}/.well-known/oauth-protected-resource/files/mcp`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('E7 unknown metadata paths are 404 without internals', async () => {
    const response = await fetch(`${gw.url}/.well-known/oauth-protected-resource/nope/mcp`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'not_found' });
  });

  it('every URL comes from config, never from Host or X-Forwarded-* headers', async () => {
    const response = await fetch(`${gw.url}/calc/mcp`, {
      method: 'POST',
      headers: { host: 'evil.test', 'x-forwarded-host': 'evil.test', 'x-forwarded-proto': 'http' },
      body: initialize,
    });
    expect(response.headers.get('www-authenticate')).toContain(`resource_metadata="${CALC_PRM}"`);
  });
});

describe('challenges (response table)', () => {
  it('A1 no Authorization header → 401 without error, with resource_metadata and scope; upstream not called', async () => {
    const response = await post('/calc/mcp', initialize);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${CALC_PRM}", scope="mcp:tools"`);
    expect(calc.requests).toHaveLength(0);
  });

  it('A2 a non-Bearer scheme → 401 without error', async () => {
    const response = await post('/calc/mcp', initialize, { authorization: 'Basic dXNlcjpwYXNz' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).not.toContain('error=');
  });

  it('A3 the scheme is case-insensitive', async () => {
    const token = await calcToken();
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const response = await post('/calc/mcp', initialize, { authorization: `${scheme} ${token}` });
      expect(response.status).toBe(200);
    }
  });

  it.each([['Bearer'], ['Bearer a b'], ['Bearer a,Bearer b'], ['Bearer "quoted"'], ['Bearer abc%20def']])(
    'A4 malformed header %j → 400 invalid_request',
    async (authorization) => {
      const response = await post('/calc/mcp', initialize, { authorization });
      expect(response.status).toBe(400);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_request", .*resource_metadata="/);
      expect(calc.requests).toHaveLength(0);
    },
  );

  it('A5 token in header and in the query, a form body or a cookie → 400; nothing forwarded', async () => {
    const token = await calcToken();
    const auth = { authorization: `Bearer ${token}` };
    const inQuery = await fetch(`${gw.url}/calc/mcp?access_token=${token}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: initialize });
    const inForm = await fetch(`${gw.url}/calc/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: `access_token=${token}`,
    });
    const inCookie = await post('/calc/mcp', initialize, { ...auth, cookie: `access_token=${token}` });
    expect([inQuery.status, inForm.status, inCookie.status]).toEqual([400, 400, 400]);
    expect(calc.requests).toHaveLength(0);
  });

  it('A6 token only in the query → 400 invalid_request, never 200', async () => {
    const token = await calcToken();
    const response = await fetch(`${gw.url}/calc/mcp?access_token=${token}`, { method: 'POST', body: initialize });
    expect(response.status).toBe(400);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_request"');
  });

  it('A7 two Authorization header lines → 400 (read from rawHeaders)', async () => {
    const token = await calcToken();
    const response = await rawRequest(
      gw.port,
      ['POST /calc/mcp HTTP/1.1', 'Host: x', 'Content-Type: application/json', `Authorization: Bearer ${token}`, `Authorization: Bearer ${token}`],
      initialize,
    );
    expect(response.status).toBe(400);
    expect(calc.requests).toHaveLength(0);
  });

  it('A8 a token over the length cap → 401 invalid_token; a 20 KiB header block → 431, process alive', async () => {
    const long = await post('/calc/mcp', initialize, { authorization: `Bearer ${'a'.repeat(9000)}` });
    expect(long.status).toBe(401);
    expect(long.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const huge = await rawRequest(gw.port, ['POST /calc/mcp HTTP/1.1', 'Host: x', `X-Big: ${'b'.repeat(20 * 1024)}`]);
    expect(huge.status).toBe(431);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });

  it('A9 GET and DELETE are authenticated like POST', async () => {
    // Session ids are bound to whoever initialized them (the echo upstream always issues session-abc).
    await post('/calc/mcp', initialize, { authorization: `Bearer ${await calcToken()}` });
    calc.requests.length = 0;
    for (const method of ['GET', 'DELETE']) {
      const bare = await fetch(`${gw.url}/calc/mcp`, { method, headers: { 'mcp-session-id': 'session-abc' } });
      expect(bare.status).toBe(401);
      expect(bare.headers.get('www-authenticate')).not.toContain('error=');
      const ok = await fetch(`${gw.url}/calc/mcp`, { method, headers: { 'mcp-session-id': 'session-abc', authorization: `Bearer ${await calcToken()}` } });
      expect(ok.status).toBe(200);
    }
    expect(calc.requests.map((request) => request.method)).toEqual(['GET', 'DELETE']);
  });

  it('a chunked POST reaches the upstream byte for byte with a Content-Length of its own; the query string follows', async () => {
    const body = callTool('add');
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(body);
        controller.enqueue(bytes.subarray(0, 10));
        controller.enqueue(bytes.subarray(10));
        controller.close();
      },
    });
    const response = await fetch(`${gw.url}/calc/mcp?trace=on`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${await calcToken()}` },
      body: chunked,
      duplex: 'half',
    });
    expect(response.status).toBe(200);
    const [received] = calc.requests;
    expect(received?.body).toBe(body);
    expect(received?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(received?.headers['transfer-encoding']).toBeUndefined();
    expect(received?.url).toBe('/mcp?trace=on');
  });

  it('a DELETE with a body forwards neither the body nor its Content-Length or Content-Type', async () => {
    await post('/calc/mcp', initialize, { authorization: `Bearer ${await calcToken()}` });
    calc.requests.length = 0;
    const response = await fetch(`${gw.url}/calc/mcp`, {
      method: 'DELETE',
      headers: { 'mcp-session-id': 'session-abc', 'content-type': 'text/plain', authorization: `Bearer ${await calcToken()}` },
      body: 'ignored',
    });
    expect(response.status).toBe(200);
    const [received] = calc.requests;
    expect(received?.body).toBe('');
    expect(received?.headers['content-type']).toBeUndefined();
    expect(Number(received?.headers['content-length'] ?? 0)).toBe(0);
  });

  it('an invalid token → 401 invalid_token with resource_metadata and scope', async () => {
    const response = await post('/calc/mcp', initialize, { authorization: 'Bearer eyJfoobar.eyJfoobar.12345asdf' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", error_description="The access token is invalid or expired", resource_metadata="${CALC_PRM}", scope="mcp:tools"`,
    );
  });

  it('C8 a token for another route of the same gateway is refused (cross-upstream replay)', async () => {
    const forFiles = await issuer.mint({ aud: FILES, scope: 'files:read mcp:tools' });
    const response = await post('/calc/mcp', initialize, { authorization: `Bearer ${forFiles}` });
    expect(response.status).toBe(401);
    expect(calc.requests).toHaveLength(0);
  });

  it('C14 a tool needing more scope → 403 naming every scope needed; a full-scope token succeeds', async () => {
    const narrow = await calcToken('mcp:tools');
    const refused = await post('/calc/mcp', callTool('multiply'), { authorization: `Bearer ${narrow}` });
    expect(refused.status).toBe(403);
    // Every scope needed; scopes_supported joined is "mcp:tools calc:write", so they come in another order
    // (test/unit/decision/challenge-scopes.test.ts).
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", error_description="The access token lacks a required scope", resource_metadata="${CALC_PRM}", scope="calc:write mcp:tools"`,
    );
    const allowedTool = await post('/calc/mcp', callTool('add'), { authorization: `Bearer ${narrow}` });
    expect(allowedTool.status).toBe(200);
    const full = await calcToken('mcp:tools calc:write');
    const accepted = await post('/calc/mcp', callTool('multiply'), { authorization: `Bearer ${full}` });
    expect(accepted.status).toBe(200);
  });

  it('an expired token gets 401, not 403, even when scopes are also missing (authenticate first)', async () => {
    const expired = await issuer.mint({ aud: CALC, scope: 'none' }, { expiresIn: -600 });
    const response = await post('/calc/mcp', callTool('multiply'), { authorization: `Bearer ${expired}` });
    expect(response.status).toBe(401);
  });

  it('G4 a session id never authenticates: no token with a session id → 401', async () => {
    const response = await post('/calc/mcp', callTool('add'), { 'mcp-session-id': 'session-abc' });
    expect(response.status).toBe(401);
  });

  it('F10 probe user agents still need a token on MCP paths', async () => {
    const response = await post('/calc/mcp', initialize, { 'user-agent': 'kube-probe/1.29' });
    expect(response.status).toBe(401);
  });

  it('I2 JWKS unreachable at cold start → 503 with Retry-After, never 401', async () => {
    issuer.setJwksDown(true);
    const cold = await startGateway(configYaml(), { env: { CALC_UPSTREAM_TOKEN: UPSTREAM_SECRET } });
    try {
      const response = await fetch(`${cold.url}/calc/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await calcToken()}`, 'content-type': 'application/json' },
        body: initialize,
      });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(response.headers.get('www-authenticate')).toBeNull();
      expect((await fetch(`${cold.url}/readyz`)).status).toBe(503);
    } finally {
      await cold.close();
    }
  });
});

describe('JSON-RPC body', () => {
  it('F11 a batch array → 400 with a JSON-RPC error; upstream not called', async () => {
    const response = await post('/calc/mcp', `[${initialize}]`, { authorization: `Bearer ${await calcToken()}` });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
    expect(calc.requests).toHaveLength(0);
  });

  it('F11 duplicate keys cannot smuggle a different method past the policy', async () => {
    const smuggled = '{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"multiply"}}';
    const response = await post('/calc/mcp', smuggled, { authorization: `Bearer ${await calcToken()}` });
    expect(response.status).toBe(400);
    expect(calc.requests).toHaveLength(0);
  });

  it('forwards exactly the bytes it evaluated', async () => {
    const body = '{ "jsonrpc": "2.0",  "id": 3, "method": "tools/call", "params": {"name": "add"} }';
    await post('/calc/mcp', body, { authorization: `Bearer ${await calcToken()}` });
    expect(calc.requests[0]?.body).toBe(body);
  });

  it('a body over max_body_bytes from an authenticated caller → 413', async () => {
    const response = await post('/calc/mcp', `{"pad":"${'x'.repeat(1_100_000)}"}`, { authorization: `Bearer ${await calcToken()}` });
    expect(response.status).toBe(413);
    expect(calc.requests).toHaveLength(0);
  });
});

describe('upstream request hygiene', () => {
  it('F1 the client token never reaches the upstream; the configured credential does', async () => {
    const token = await calcToken();
    await post('/calc/mcp', initialize, { authorization: `Bearer ${token}`, 'proxy-authorization': `Bearer ${token}` });
    const seen = calc.requests[0];
    expect(seen?.headers.authorization).toBe(`Bearer ${UPSTREAM_SECRET}`);
    expect(JSON.stringify(seen)).not.toContain(token);
  });

  it('F3 client identity and forwarding headers are stripped before the upstream', async () => {
    await post('/calc/mcp', initialize, {
      authorization: `Bearer ${await calcToken()}`,
      'X-Forwarded-User': 'admin',
      'X-FORWARDED-EMAIL': 'admin@example.test',
      'X-Auth-Request-User': 'admin',
      'X-MCP-User': 'admin',
      'X-Forwarded-For': '10.0.0.1',
    });
    const names = Object.keys(calc.requests[0]?.headers ?? {});
    expect(names.filter((name) => /forwarded|auth-request|x-mcp-user/.test(name))).toEqual([]);
  });

  it('F3 a client Connection header cannot strip the injected credential', async () => {
    const response = await rawRequest(
      gw.port,
      ['POST /calc/mcp HTTP/1.1', 'Host: x', 'Content-Type: application/json', `Authorization: Bearer ${await calcToken()}`, 'Connection: authorization, x-extra', 'X-Extra: 1'],
      initialize,
    );
    expect(response.status).toBe(200);
    expect(calc.requests[0]?.headers.authorization).toBe(`Bearer ${UPSTREAM_SECRET}`);
    expect(calc.requests[0]?.headers['x-extra']).toBeUndefined();
  });

  it('MCP headers pass through both ways', async () => {
    await post('/calc/mcp', initialize, { authorization: `Bearer ${await calcToken()}` });
    calc.requests.length = 0;
    const response = await post('/calc/mcp', initialize, {
      authorization: `Bearer ${await calcToken()}`,
      'mcp-session-id': 'session-abc',
      'mcp-protocol-version': '2025-11-25',
      'last-event-id': 'ev-1',
    });
    const seen = calc.requests[0]?.headers;
    expect([seen?.['mcp-session-id'], seen?.['mcp-protocol-version'], seen?.['last-event-id']]).toEqual(['session-abc', '2025-11-25', 'ev-1']);
    expect(response.headers.get('mcp-session-id')).toBe('session-abc');
  });
});

describe('upstream responses', () => {
  it('F5 an upstream 401 challenge is never relayed: the client gets 502', async () => {
    calc.respondWith((_request, response) => {
      response.statusCode = 401;
      response.setHeader('www-authenticate', 'Bearer resource_metadata="https://evil.test/prm"');
      response.end('nope');
    });
    const response = await post('/calc/mcp', initialize, { authorization: `Bearer ${await calcToken()}` });
    expect(response.status).toBe(502);
    expect(response.headers.get('www-authenticate')).toBeNull();
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32603);
  });

  it('F6 upstream error bodies and gateway errors never echo the injected credential', async () => {
    calc.respondWith((request, response) => {
      response.statusCode = 500;
      response.end(`upstream saw ${request.headers.authorization ? 'a credential' : 'nothing'}`);
    });
    const response = await post('/calc/mcp', initialize, { authorization: `Bearer ${await calcToken()}` });
    expect(await response.text()).not.toContain(UPSTREAM_SECRET);
  });

  it('I8 an upstream that breaks off a small answer midway → 502 with a JSON-RPC error, never a truncated 200', async () => {
    calc.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"jsonrpc":"2.0",');
      response.socket?.destroy();
    });
    const response = await post('/calc/mcp', initialize, { authorization: `Bearer ${await calcToken()}` });
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32603);
  });

  it('a small answer is relayed whole: status, Content-Length and every byte', async () => {
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text: 'é'.repeat(1000) } });
    calc.respondWith((_request, response) => {
      response.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer), 'x-upstream': 'kept' });
      response.end(answer);
    });
    const response = await post('/calc/mcp', initialize, { authorization: `Bearer ${await calcToken()}` });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-upstream')).toBe('kept');
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(answer)));
    expect(await response.text()).toBe(answer);
  });

  it('an answer without Content-Type (202 to a notification) is relayed without one', async () => {
    calc.respondWith((_request, response) => {
      response.writeHead(202, { 'content-length': '0' });
      response.end();
    });
    const notification = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const response = await post('/calc/mcp', notification, { authorization: `Bearer ${await calcToken()}` });
    expect(response.status).toBe(202);
    expect(response.headers.get('content-type')).toBeNull();
    expect(await response.text()).toBe('');
  });

  it('I8 upstream never answering → 504 with a JSON-RPC error', async () => {
    calc.respondWith(() => undefined);
    const response = await post('/calc/mcp', initialize, { authorization: `Bearer ${await calcToken()}` });
    expect(response.status).toBe(504);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32603);
  });

  it('I6 a client that disconnects before any answer aborts the upstream request at once', async () => {
    // Headers timeout far beyond the test timeout: only the client's disconnect can end the upstream request.
    const patient = await startGateway(configYaml().replace('timeouts: { headers: 2s }', 'timeouts: { headers: 10m }'), {
      env: { CALC_UPSTREAM_TOKEN: UPSTREAM_SECRET },
    });
    try {
      const { reached: received, closed } = neverAnswering(calc);
      const client = new AbortController();
      const pending = fetch(`${patient.url}/calc/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await calcToken()}`, 'content-type': 'application/json' },
        body: initialize,
        signal: client.signal,
      }).catch((error: unknown) => error);
      await received;
      client.abort();
      await closed;
      expect(await pending).toBeInstanceOf(Error);
      expect(calc.requests[0]?.headers['x-mcp-gateway-abort-key']).toBeUndefined();
    } finally {
      await patient.close();
    }
  });

  it('streams SSE events as they come, without buffering the response', async () => {
    let finish: () => void = () => undefined;
    calc.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.write('id: 1\ndata: {"first":true}\n\n');
      finish = () => response.end('id: 2\ndata: {"last":true}\n\n');
    });
    const response = await fetch(`${gw.url}/calc/mcp`, { headers: { authorization: `Bearer ${await calcToken()}`, accept: 'text/event-stream' } });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"first":true');
    finish();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    expect(rest).toContain('"last":true');
  });
});

describe('CORS and Origin', () => {
  it('A11 preflight is answered by the gateway without auth and never reaches the upstream', async () => {
    const response = await fetch(`${gw.url}/calc/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://any.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('access-control-allow-headers')).toBe('authorization');
    expect(calc.requests).toHaveLength(0);
  });

  it('a browser can read the challenge: 401 responses expose WWW-Authenticate and Mcp-Session-Id', async () => {
    const response = await post('/calc/mcp', initialize, { origin: 'https://any.example' });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/);
    expect(response.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/);
  });

  it('A11/G6 a disallowed Origin gets no CORS grant and 403, preflight included', async () => {
    const preflight = await fetch(`${gw.url}/files/mcp`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const post403 = await post('/files/mcp', initialize, { origin: 'https://evil.example', authorization: `Bearer ${await issuer.mint({ aud: FILES, scope: 'files:read' })}` });
    expect(post403.status).toBe(403);
    expect(files.requests).toHaveLength(0);
    const allowed = await fetch(`${gw.url}/files/mcp`, { method: 'OPTIONS', headers: { origin: 'https://app.example.test', 'access-control-request-method': 'POST' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
  });
});

describe('routing and health', () => {
  it('unknown paths and trailing-slash variants are 404', async () => {
    expect((await post('/nope', initialize)).status).toBe(404);
    expect((await post('/calc/mcp/', initialize)).status).toBe(404);
  });

  it('healthz is live and readyz turns ready once the JWKS was fetched', async () => {
    await gw.gateway.warm();
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', routes: { calc: true, files: true } });
  });
});

describe('logs', () => {
  it('H1/H2 a canary token and the upstream secret never appear in logs; query strings are redacted', async () => {
    const canary = await calcToken('mcp:tools', { canary: 'CANARY' });
    await post('/calc/mcp', initialize, { authorization: `Bearer ${canary}` });
    await fetch(`${gw.url}/calc/mcp?access_token=${canary}`, { method: 'POST', body: initialize });
    await post('/calc/mcp', initialize, { authorization: `Bearer ${canary}x` });
    calc.respondWith(() => undefined);
    await post('/calc/mcp', initialize, { authorization: `Bearer ${canary}` });
    const all = gw.logs.join('\n');
    expect(all.length).toBeGreaterThan(0);
    for (const secret of [canary, canary.split('.')[2]!, encodeURIComponent(canary), UPSTREAM_SECRET]) {
      expect(all).not.toContain(secret);
    }
  });
});
