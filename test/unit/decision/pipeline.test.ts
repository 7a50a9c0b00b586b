import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRouteVerifier } from '../../../src/auth/route-verifier.js';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import type { RequestFacts } from '../../../src/decision/facts.js';
import { admit, authorize } from '../../../src/decision/pipeline.js';
import { refusalResponse } from '../../../src/decision/responses.js';
import { createDecisionState, type DecisionState } from '../../../src/decision/state.js';
import { GatewayError } from '../../../src/decision/refusal.js';
import { createSigningKeySource } from '../../../src/identity/signing-key.js';
import { createPrincipalSlots } from '../../../src/ratelimit/principal-slots.js';
import { createRuntime, type Runtime } from '../../../src/gateway/runtime.js';
import { compileOrThrow } from '../../helpers/gateway.js';

/**
 * The decision core without a server: request facts in, an answer, a refusal or upstream headers out. The
 * authorization server's JWKS is served by the verifier's injected fetch (the real jose verifier, in process).
 */

const ISSUER = 'https://as.example.test';
const PUBLIC = 'http://127.0.0.1:8080';
const RESOURCE = `${PUBLIC}/calc/mcp`;
let runtime: Runtime;
let privateKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const jwksFetch: typeof fetch = () => Promise.resolve(Response.json({ keys: [jwk] }));
  const config = compileOrThrow(`
public_url: ${PUBLIC}
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: "http://127.0.0.1:3000/mcp", auth: { type: bearer, token: upstream-secret } }
    authorization_servers: [${ISSUER}]
    tokens: { jwt: { issuer: ${ISSUER}, jwks_uri: ${ISSUER}/jwks, algorithms: [ES256] } }
    cors: { allowed_origins: ["https://app.example"] }
    policy: { scopes: [mcp], tools: { multiply: [calc:write] } }
`);
  const store = createMemoryStore();
  const keySecret = Buffer.alloc(32, 7);
  runtime = createRuntime(config, (route) => createRouteVerifier(route, { store, keySecret, fetch: jwksFetch }), {
    store,
    keySecret,
    signingKeys: createSigningKeySource(),
    slots: { streams: createPrincipalSlots(), requestsInFlight: createPrincipalSlots() },
  });
});

const token = (scope: string, claims: Record<string, unknown> = {}) => {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: ISSUER, aud: RESOURCE, sub: 'alice', client_id: 'ide', scope, iat: now, exp: now + 300, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .sign(privateKey);
};

function facts(method: string, headers: Record<string, string>, url = '/calc/mcp'): RequestFacts {
  const lowered = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const all = { host: '127.0.0.1:8080', ...lowered };
  return { method, url, headers: all, rawHeaders: Object.entries(headers).flat(), host: all.host, clientAddress: '127.0.0.1' };
}

/** Runs both stages like a front door would; the refusal's status, or the early answer's, or 'allowed'. */
async function decide(request: RequestFacts, body?: string): Promise<{ outcome: number | 'allowed'; state: DecisionState; refusal?: GatewayError }> {
  const state = createDecisionState(runtime, request, 'proxy');
  try {
    const answer = await admit(state);
    if (answer) return { outcome: answer.status, state };
    state.body = body === undefined ? undefined : Buffer.from(body);
    await authorize(state);
    return { outcome: 'allowed', state };
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { outcome: refusalResponse(error, state).statusCode, state, refusal: error };
  }
}

const call = (name: string) => JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name } });
const JSON_BODY = { 'Content-Type': 'application/json' };

describe('decision pipeline: the order of the steps is the contract', () => {
  it('unknown path → 404 before anything else', async () => {
    expect((await decide(facts('POST', {}, '/other'))).outcome).toBe(404);
  });

  it('DNS rebinding (foreign Host) is refused before the token is even looked at', async () => {
    const { outcome, refusal } = await decide(facts('POST', { Host: 'evil.example', Authorization: 'Bearer x' }));
    expect([outcome, refusal?.code]).toEqual([403, 'host_forbidden']);
  });

  it('a preflight from an allowed origin is answered (204) without a token', async () => {
    const { outcome, state } = await decide(facts('OPTIONS', { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' }));
    expect(outcome).toBe(204);
    expect(state.responseHeaders['access-control-allow-origin']).toBe('https://app.example');
  });

  it('on a loopback gateway a foreign Origin is a rebinding attempt → 403 host_forbidden; a loopback one meets CORS', async () => {
    expect((await decide(facts('POST', { Origin: 'https://evil.example' }))).refusal?.code).toBe('host_forbidden');
    expect((await decide(facts('POST', { Origin: 'http://localhost:6274' }))).refusal?.code).toBe('origin_forbidden');
  });

  it('no token → 401 with the route challenge', async () => {
    const { state, refusal } = await decide(facts('POST', JSON_BODY));
    const response = refusalResponse(refusal!, state);
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe(
      `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/calc/mcp", scope="mcp"`,
    );
  });

  it('an unknown method is told only to an authenticated caller (K7)', async () => {
    expect((await decide(facts('PUT', {}))).outcome).toBe(401);
    expect((await decide(facts('PUT', { Authorization: `Bearer ${await token('mcp')}` }))).outcome).toBe(405);
  });

  it('missing route scope → 403 in stage one, without a body', async () => {
    const { outcome, refusal } = await decide(facts('POST', { Authorization: `Bearer ${await token('other')}`, ...JSON_BODY }));
    expect([outcome, refusal?.requiredScopes]).toEqual([403, ['mcp']]);
  });

  it('the operation scopes come from the body → 403 naming every scope, with the request id', async () => {
    const { state, refusal } = await decide(facts('POST', { Authorization: `Bearer ${await token('mcp')}`, ...JSON_BODY }), call('multiply'));
    const response = refusalResponse(refusal!, state);
    expect(response.statusCode).toBe(403);
    expect(response.headers['www-authenticate']).toContain('scope="mcp calc:write"');
    expect(state.jsonRpcId).toBe(9);
  });

  it('allowed: the upstream headers are the route credential, never the caller token', async () => {
    const bearer = await token('mcp calc:write');
    const { outcome, state } = await decide(facts('POST', { Authorization: `Bearer ${bearer}`, ...JSON_BODY }), call('multiply'));
    expect(outcome).toBe('allowed');
    expect(state.upstreamHeaders).toEqual({ authorization: 'Bearer upstream-secret' });
    expect(JSON.stringify(state)).not.toContain(bearer);
    expect(state.auth?.subject).toBe('alice');
  });

  it('a refusal after CORS carries the CORS headers the request earned', async () => {
    const { state, refusal } = await decide(facts('POST', { Origin: 'https://app.example', ...JSON_BODY }));
    expect(refusalResponse(refusal!, state).headers['access-control-allow-origin']).toBe('https://app.example');
  });

  it('a mismatched mirrored header → 400 -32020 with the request id', async () => {
    const headers = { Authorization: `Bearer ${await token('mcp calc:write')}`, 'Mcp-Method': 'tools/list', ...JSON_BODY };
    const { state, refusal } = await decide(facts('POST', headers), call('multiply'));
    expect(JSON.parse(refusalResponse(refusal!, state).body)).toMatchObject({ id: 9, error: { code: -32020 } });
  });
});

describe('a traced decision (state.trace)', () => {
  /** Records what the pipeline tells the request's span. */
  function recorder(state: DecisionState): string[] {
    const told: string[] = [];
    state.trace = { step: (name, stage) => told.push(`${stage}: ${name}`), decided: (verdict) => told.push(`decided ${verdict}`) };
    return told;
  }

  it('hears of every step as it starts, then of the verdict', async () => {
    const state = createDecisionState(runtime, facts('POST', { authorization: `Bearer ${await token('mcp')}`, 'content-type': 'application/json' }), 'proxy');
    const told = recorder(state);
    expect(await admit(state)).toBeUndefined();
    state.body = Buffer.from(call('add'));
    await authorize(state);
    expect(told).toEqual([
      'admit: route', 'admit: origin', 'admit: preflight', 'admit: token', 'admit: method', 'admit: route scopes',
      'admit: rate limit', 'admit: session',
      'authorize: message', 'authorize: operation scopes', 'authorize: upstream headers', 'authorize: stream or request slot',
      'decided allowed',
    ]);
  });

  it('hears of an early answer (preflight) as answered', async () => {
    const state = createDecisionState(
      runtime,
      facts('OPTIONS', { origin: 'https://app.example', 'access-control-request-method': 'POST' }),
      'proxy',
    );
    const told = recorder(state);
    expect((await admit(state))?.status).toBe(204);
    expect(told.at(-1)).toBe('decided answered');
  });

  it('stops at the refusing step: the door tells the refusal (the last step heard is the one that refused)', () => {
    const state = createDecisionState(runtime, facts('POST', {}), 'proxy');
    const told = recorder(state);
    // Nothing to wait for: the refusal is thrown at once.
    expect(() => admit(state)).toThrow(GatewayError);
    expect(told.at(-1)).toBe('admit: token');
  });
});
