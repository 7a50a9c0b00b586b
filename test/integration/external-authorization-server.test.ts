import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { active, INTROSPECTION_SECRET, json, startIntrospectionServer, type TestIntrospectionServer } from '../helpers/introspection-server.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { startOidcIntrospectionServer, type OidcIntrospectionServer } from '../helpers/oidc-introspection.js';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

/**
 * Routes in front of authorization servers the deployment keeps (README: "Deployments that keep their own
 * authorization server"): audiences that are an app id or a URN, introspection answers without `aud` or `iss`.
 */

const PUBLIC = 'https://gw.example.test';
const APP_ID = '00000000-aaaa-4bbb-8ccc-000000000001';
const URN = 'urn:example:calc';
const AS_ISSUER = 'https://login.example.test/tenant';

let issuer: TestIssuer;
let upstream: TestUpstream;
let as: TestIntrospectionServer;
let idp: OidcIntrospectionServer;
let gw: RunningGateway;

/** The introspection answer for each test token: the token names the answer's shape. */
const ANSWERS: Readonly<Record<string, Record<string, unknown>>> = {
  complete: { iss: AS_ISSUER, aud: [`${PUBLIC}/strict/mcp`, `${PUBLIC}/lenient/mcp`] },
  'no-aud': { iss: AS_ISSUER },
  'no-iss': { aud: [`${PUBLIC}/strict/mcp`, `${PUBLIC}/lenient/mcp`] },
  'neither': {},
  'foreign-aud': { iss: AS_ISSUER, aud: ['https://other.example.test/mcp'] },
  'foreign-iss': { iss: 'https://evil.example.test', aud: [`${PUBLIC}/lenient/mcp`] },
};

function introspectionRoute(name: string, extra: string): string {
  return `
  - name: ${name}
    path: /${name}/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${AS_ISSUER}]
    tokens:
      introspection:
        endpoint: ${as.endpoint.href}
        client_id: gateway
        client_secret: ${INTROSPECTION_SECRET}
        issuer: ${AS_ISSUER}${extra}`;
}

beforeAll(async () => {
  [issuer, upstream, as, idp] = await Promise.all([
    startTestIssuer(),
    startTestUpstream(),
    startIntrospectionServer(),
    startOidcIntrospectionServer(`${PUBLIC}/signed/mcp`),
  ]);
  as.respond((call) => {
    const claims = ANSWERS[call.token ?? ''];
    if (claims === undefined) return json({ active: false });
    return active({ sub: 'alice', client_id: 'app', scope: 'mcp:tools', exp: Math.floor(Date.now() / 1000) + 300, ...claims });
  });
  gw = await startGateway(`
public_url: ${PUBLIC}
routes:
  - name: app-audience
    path: /app-audience/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256], audience: [${APP_ID}, "${URN}"] } }
  - name: openid-idp
    path: /openid-idp/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${issuer.issuer}]
    scopes_supported: [mcp:tools, calc:write]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
    policy:
      scopes: [mcp:tools]
      tools: { multiply: [calc:write] }
      challenge_scopes: [openid]
${introspectionRoute('strict', '')}
${introspectionRoute('lenient', `
        accept_missing_aud: true
        accept_missing_iss: true`)}
  - name: signed
    path: /signed/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${idp.issuer}]
    tokens:
      introspection:
        endpoint: ${idp.introspectionEndpoint}
        client_id: ${idp.gatewayClientId}
        private_key: \${env:GATEWAY_KEY}
        issuer: ${idp.issuer}
`, { env: { GATEWAY_KEY: JSON.stringify(idp.gatewayPrivateJwk) } });
});

afterAll(async () => {
  await gw.close();
  await Promise.all([issuer.close(), upstream.close(), as.close(), idp.close()]);
});

function post(path: string, token: string): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

function callTool(path: string, name: string, token?: string): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
  });
}

function challengeScope(response: Response): string | undefined {
  return /scope="([^"]*)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
}

function challengeError(response: Response): string | undefined {
  return /error="([^"]*)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
}

describe('tokens.jwt.audience as a list (an IdP whose audience is an app id or a URN)', () => {
  it.each([
    ['the app id', APP_ID],
    ['the URN', URN],
    ['the URN among foreign audiences', [URN, 'https://other.example.test/mcp']],
  ])('a token with one of the listed audiences (%s) is accepted', async (_case, aud) => {
    const token = await issuer.mint({ aud, scope: 'mcp:tools' });
    expect((await post('/app-audience/mcp', token)).status).toBe(200);
  });

  it.each([
    ['the route resource (not listed)', `${PUBLIC}/app-audience/mcp`],
    ['another app id', '00000000-aaaa-4bbb-8ccc-000000000002'],
    ['a prefix of the URN', 'urn:example'],
  ])('a token with none of the listed audiences (%s) → 401 invalid_token', async (_case, aud) => {
    const response = await post('/app-audience/mcp', await issuer.mint({ aud, scope: 'mcp:tools' }));
    expect(response.status).toBe(401);
    expect(challengeError(response)).toBe('invalid_token');
  });
});

describe('introspection answers without aud or iss (RFC 7662 §2.2 makes both optional)', () => {
  it.each(['complete', 'no-aud', 'no-iss', 'neither'])('%s answer: accepted on the route that opted in', async (token) => {
    expect((await post('/lenient/mcp', token)).status).toBe(200);
  });

  it.each(['no-aud', 'no-iss', 'neither'])('%s answer: 401 invalid_token by default', async (token) => {
    const response = await post('/strict/mcp', token);
    expect(response.status).toBe(401);
    expect(challengeError(response)).toBe('invalid_token');
  });

  it('a complete answer is accepted by default', async () => {
    expect((await post('/strict/mcp', 'complete')).status).toBe(200);
  });

  it.each(['foreign-aud', 'foreign-iss'])('%s answer: still 401 invalid_token on the route that opted in', async (token) => {
    const response = await post('/lenient/mcp', token);
    expect(response.status).toBe(401);
    expect(challengeError(response)).toBe('invalid_token');
  });
});

describe('introspection client authentication by private_key_jwt (RFC 7523) at a real oidc-provider', () => {
  it('a token the IdP issued for the route is introspected with a signed assertion and accepted', async () => {
    expect((await post('/signed/mcp', await idp.issueToken('mcp:tools'))).status).toBe(200);
  });

  it('a token the IdP does not know → 401 invalid_token (the endpoint answered the gateway: active false)', async () => {
    const response = await post('/signed/mcp', 'never-issued-by-this-idp');
    expect(response.status).toBe(401);
    expect(challengeError(response)).toBe('invalid_token');
  });

  it('the private key never appears in a log line', () => {
    const d = idp.gatewayPrivateJwk.d ?? '';
    expect(d).not.toBe('');
    expect(gw.logs.join('\n')).not.toContain(d);
  });
});

describe('introspection client authentication refused by the endpoint', () => {
  let wrongKey: RunningGateway;
  beforeAll(async () => {
    const other = await startOidcIntrospectionServer(`${PUBLIC}/signed/mcp`);
    // The key of another server's gateway client: the IdP cannot verify its assertions.
    const yaml = `
public_url: ${PUBLIC}
routes:
  - name: signed
    path: /signed/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${idp.issuer}]
    tokens:
      introspection: { endpoint: ${idp.introspectionEndpoint}, client_id: gateway, private_key: "\${env:GATEWAY_KEY}", issuer: ${idp.issuer} }
`;
    wrongKey = await startGateway(yaml, { env: { GATEWAY_KEY: JSON.stringify(other.gatewayPrivateJwk) } });
    await other.close();
  });
  afterAll(() => wrongKey.close());

  it('an assertion signed with a key the IdP does not hold → 503 (the gateway cannot decide), never 401 or 200', async () => {
    const response = await fetch(`${wrongKey.url}/signed/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${await idp.issueToken('mcp:tools')}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(503);
    expect(wrongKey.logs.join('\n')).toContain('introspection endpoint refused the gateway client credentials');
  });
});

describe('policy.challenge_scopes (an IdP that refuses any authorization request without openid)', () => {
  const resource = `${PUBLIC}/openid-idp/mcp`;

  it('the 401 challenge names openid after the route scopes', async () => {
    const response = await callTool('/openid-idp/mcp', 'add');
    expect(response.status).toBe(401);
    expect(challengeScope(response)).toBe('mcp:tools openid');
  });

  it('a 403 step-up names openid too, and never equals scopes_supported joined', async () => {
    const response = await callTool('/openid-idp/mcp', 'multiply', await issuer.mint({ aud: resource, scope: 'mcp:tools' }));
    expect(response.status).toBe(403);
    const scope = challengeScope(response);
    expect(scope?.split(' ').sort()).toEqual(['calc:write', 'mcp:tools', 'openid']);
    expect(scope).not.toBe('mcp:tools calc:write openid');
  });

  it('protected resource metadata lists openid in scopes_supported', async () => {
    const document = (await (await fetch(`${gw.url}/.well-known/oauth-protected-resource/openid-idp/mcp`)).json()) as Record<string, unknown>;
    expect(document.scopes_supported).toEqual(['mcp:tools', 'calc:write', 'openid']);
  });

  it('a token without openid is accepted: challenge scopes are never required', async () => {
    expect((await callTool('/openid-idp/mcp', 'add', await issuer.mint({ aud: resource, scope: 'mcp:tools' }))).status).toBe(200);
    expect((await callTool('/openid-idp/mcp', 'multiply', await issuer.mint({ aud: resource, scope: 'mcp:tools calc:write' }))).status).toBe(200);
  });
});
