import type { AddressInfo } from 'node:net';
import { base64url, generateSecret } from 'jose';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/cache/redis-store.js';
import { createDpopKey, signProof, type DpopKey, type ProofClaims } from '../helpers/dpop.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { active, startIntrospectionServer, type TestIntrospectionServer } from '../helpers/introspection-server.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { startRedis, uniquePrefix, type RedisHandle } from '../helpers/redis.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../helpers/redis-timeouts.js';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

/**
 * DPoP (RFC 9449) at both doors of real gateways: two replicas on one real Redis (the replay cache), a real JWT
 * issuer and introspection endpoint, a recording upstream. Each check of §4.3 refused over HTTP with its challenge;
 * §7.2's schemes per `routes[].dpop.mode`; §9's nonce; the proof never reaching the upstream.
 */

const PUBLIC = 'https://gw.example.test';
const KEY_SECRET = 'dpop-test-key-secret-of-32-characters-at-least';
const DECISION_SECRET = 'a-shared-secret-of-at-least-32-characters';
const url = (name: string) => `${PUBLIC}/${name}/mcp`;
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

let redis: RedisHandle;
let issuer: TestIssuer;
let upstream: TestUpstream;
let introspection: TestIntrospectionServer;
let first: RunningGateway;
let second: RunningGateway;
let decisionUrl: string;
let key: DpopKey;
let other: DpopKey;
/** What the introspection endpoint answers per opaque token. */
const answers = new Map<string, Record<string, unknown>>();

function route(name: string, dpop: string): string {
  return `
  - name: ${name}
    path: /${name}/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
    sessions: { bind: false }
    dpop: ${dpop}`;
}

function configYaml(): string {
  return `
public_url: ${PUBLIC}
allowed_hosts: [gw.example.test]
cache: { key_secret: "${KEY_SECRET}" }
decision: { port: 0, proxy: nginx, secret: ${DECISION_SECRET} }
routes:${route('bearer', '{}')}${route('accepted', '{ mode: accepted }')}${route('required', '{ mode: required, algorithms: [ES256, EdDSA] }')}${route('nonce', '{ mode: required, require_nonce: true }')}
  - name: opaque
    path: /opaque/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${issuer.issuer}]
    tokens: { introspection: { endpoint: ${introspection.endpoint.href}, client_id: gw, client_secret: s } }
    sessions: { bind: false }
    dpop: { mode: accepted }
`;
}

async function replica(keyPrefix: string): Promise<RunningGateway> {
  const cache = createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
  expect(await cache.whenReady(10_000)).toBe(true);
  return startGateway(configYaml(), { cache });
}

beforeAll(async () => {
  [redis, issuer, upstream, introspection, key, other] = await Promise.all([
    startRedis(),
    startTestIssuer(),
    startTestUpstream(),
    startIntrospectionServer(),
    createDpopKey('ES256'),
    createDpopKey('ES256'),
  ]);
  introspection.respond((call) => active({ aud: [url('opaque')], exp: Math.floor(Date.now() / 1000) + 300, ...answers.get(call.token ?? '') }));
  const keyPrefix = uniquePrefix('dpop');
  [first, second] = [await replica(keyPrefix), await replica(keyPrefix)];
  const decision = first.gateway.decision;
  if (!decision) throw new Error('decision listener not built');
  await decision.listen({ host: '127.0.0.1', port: 0 });
  decisionUrl = `http://127.0.0.1:${(decision.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
  await Promise.all([issuer?.close(), upstream?.close(), introspection?.close(), redis?.stop()]);
});

const boundToken = (name: string, jkt = key.jkt) => issuer.mint({ aud: url(name), sub: 'alice', cnf: { jkt } });
const unboundToken = (name: string) => issuer.mint({ aud: url(name), sub: 'alice' });

interface Sent {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

/** A POST to `name`'s MCP path on `gw` with the given Authorization and DPoP lines. */
async function send(gw: RunningGateway, name: string, authorization: string | undefined, proofs: readonly string[] = []): Promise<Sent> {
  const headers = new Headers({ 'content-type': 'application/json', host: 'gw.example.test' });
  if (authorization !== undefined) headers.set('authorization', authorization);
  for (const proof of proofs) headers.append('dpop', proof);
  // fetch joins repeated lines into one; undici's request keeps them as sent.
  const raw: string[] = [...headers.entries()].filter(([name]) => name !== 'dpop').flat();
  for (const proof of proofs) raw.push('dpop', proof);
  const response = await request(`${gw.url}/${name}/mcp`, { method: 'POST', headers: raw, body: PING });
  const text = await response.body.text();
  const answer = new Headers();
  for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') answer.set(name, value);
  return { status: response.statusCode, headers: answer, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** A valid proof of `key` for a POST to `name` with `token`. */
const proofFor = (name: string, token: string, overrides: Partial<ProofClaims> = {}, signer = key) =>
  signer.proof({ htm: 'POST', htu: url(name), accessToken: token, ...overrides });

function expectProofRefused(sent: Sent): void {
  expect(sent.status).toBe(401);
  expect(sent.body).toMatchObject({ error: 'invalid_dpop_proof' });
  expect(sent.headers.get('www-authenticate')).toMatch(/(^|, )DPoP error="invalid_dpop_proof", error_description="[^"]+", resource_metadata="[^"]+", algs="[^"]+"/);
}

describe('DPoP-bound tokens with a valid proof', () => {
  it('accepted route: a bound JWT with a valid proof → 200; neither the proof nor the token reaches the upstream', async () => {
    upstream.requests.length = 0;
    const token = await boundToken('accepted');
    const sent = await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token)]);
    expect(sent.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    const forwarded = upstream.requests[0]?.rawHeaders.join('\n').toLowerCase() ?? '';
    expect(forwarded).not.toContain('dpop');
    expect(forwarded).not.toContain(token.toLowerCase());
  });

  it('accepted route: an unbound token as Bearer → 200 (bearer tokens still work)', async () => {
    expect((await send(first, 'accepted', `Bearer ${await unboundToken('accepted')}`)).status).toBe(200);
  });

  it('required route: an EdDSA proof (allowed there) → 200', async () => {
    const ed = await createDpopKey('EdDSA');
    const token = await boundToken('required', ed.jkt);
    expect((await send(first, 'required', `DPoP ${token}`, [await proofFor('required', token, {}, ed)])).status).toBe(200);
  });

  it('introspection: an answer with cnf.jkt is bound: with a proof → 200, as Bearer → 401 invalid_token', async () => {
    answers.set('opaque-bound', { sub: 'alice', cnf: { jkt: key.jkt } });
    expect((await send(first, 'opaque', 'DPoP opaque-bound', [await proofFor('opaque', 'opaque-bound')])).status).toBe(200);
    const asBearer = await send(first, 'opaque', 'Bearer opaque-bound');
    expect(asBearer.status).toBe(401);
    expect(asBearer.body).toMatchObject({ error: 'invalid_token' });
  });
});

describe('schemes and challenges per dpop.mode (RFC 9449 §7.1, §7.2)', () => {
  it('accepted route: no token → 401 with a Bearer and a DPoP challenge (algs)', async () => {
    const sent = await send(first, 'accepted', undefined);
    expect(sent.status).toBe(401);
    const challenge = sent.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer resource_metadata="[^"]+"/);
    expect(challenge).toContain(', DPoP resource_metadata="https://gw.example.test/.well-known/oauth-protected-resource/accepted/mcp", algs="ES256 PS256 RS256 EdDSA Ed25519"');
  });

  it('a bound token sent as Bearer is refused: 401 invalid_token in both challenges', async () => {
    const sent = await send(first, 'accepted', `Bearer ${await boundToken('accepted')}`);
    expect(sent.status).toBe(401);
    expect(sent.body).toMatchObject({ error: 'invalid_token' });
    expect(sent.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token".*, DPoP error="invalid_token"/);
  });

  it('bearer_only route (the default): a bound token is refused as before, with or without a proof, and no DPoP challenge', async () => {
    const token = await boundToken('bearer');
    const asBearer = await send(first, 'bearer', `Bearer ${token}`);
    expect(asBearer.status).toBe(401);
    expect(asBearer.body).toMatchObject({ error: 'invalid_token' });
    const asDpop = await send(first, 'bearer', `DPoP ${token}`, [await proofFor('bearer', token)]);
    expect(asDpop.status).toBe(401);
    expect(asDpop.headers.get('www-authenticate')).not.toContain('DPoP');
  });

  it('required route: a Bearer credential counts as none → 401 with only a DPoP challenge', async () => {
    const sent = await send(first, 'required', `Bearer ${await unboundToken('required')}`);
    expect(sent.status).toBe(401);
    expect(sent.headers.get('www-authenticate')).toMatch(/^DPoP resource_metadata="[^"]+", algs="ES256 EdDSA"$/);
  });

  it('an unbound token sent as DPoP → 401 invalid_token', async () => {
    const token = await unboundToken('accepted');
    const sent = await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token)]);
    expect(sent.status).toBe(401);
    expect(sent.body).toMatchObject({ error: 'invalid_token' });
  });

  it('the metadata document advertises the algorithms and whether bound tokens are required (RFC 9728 §2)', async () => {
    const accepted = (await (await fetch(`${first.url}/.well-known/oauth-protected-resource/accepted/mcp`)).json()) as Record<string, unknown>;
    expect(accepted).toMatchObject({ dpop_signing_alg_values_supported: ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'], dpop_bound_access_tokens_required: false });
    const required = (await (await fetch(`${first.url}/.well-known/oauth-protected-resource/required/mcp`)).json()) as Record<string, unknown>;
    expect(required).toMatchObject({ dpop_bound_access_tokens_required: true });
    const bearer = (await (await fetch(`${first.url}/.well-known/oauth-protected-resource/bearer/mcp`)).json()) as Record<string, unknown>;
    expect(bearer).not.toHaveProperty('dpop_signing_alg_values_supported');
  });
});

describe('RFC 9449 §4.3: each check refuses over HTTP with invalid_dpop_proof', () => {
  const now = () => Math.floor(Date.now() / 1000);

  it('no DPoP header with a bound token → refused', async () => {
    expectProofRefused(await send(first, 'accepted', `DPoP ${await boundToken('accepted')}`));
  });

  it('check 1: two DPoP headers → refused', async () => {
    const token = await boundToken('accepted');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token), await proofFor('accepted', token)]));
  });

  it('a bad signature → refused', async () => {
    const token = await boundToken('accepted');
    const [header, payload, signature = ''] = (await proofFor('accepted', token)).split('.');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [`${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`]));
  });

  it('a valid proof by another key than the token is bound to → refused', async () => {
    const token = await boundToken('accepted');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token, {}, other)]));
  });

  it('a wrong htm → refused', async () => {
    const token = await boundToken('accepted');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token, { htm: 'GET' })]));
  });

  it('a wrong htu (another route of the same gateway) → refused', async () => {
    const token = await boundToken('accepted');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token, { htu: url('required') })]));
  });

  it('a stale iat → refused', async () => {
    const token = await boundToken('accepted');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token, { iat: now() - 120 })]));
  });

  it('an iat in the future → refused', async () => {
    const token = await boundToken('accepted');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token, { iat: now() + 120 })]));
  });

  it('a missing ath → refused', async () => {
    const token = await boundToken('accepted');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token, { ath: undefined })]));
  });

  it('a wrong ath (the hash of another token) → refused', async () => {
    const token = await boundToken('accepted');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token, { accessToken: await boundToken('accepted') })]));
  });

  it('HS256 (a symmetric algorithm) → refused', async () => {
    const token = await boundToken('accepted');
    const secret = await generateSecret('HS256', { extractable: true });
    const jwk = { kty: 'oct', k: base64url.encode(new Uint8Array(32)) };
    const proof = await signProof(secret, { typ: 'dpop+jwt', alg: 'HS256', jwk }, { htm: 'POST', htu: url('accepted'), accessToken: token });
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [proof]));
  });

  it('alg none → refused', async () => {
    const token = await boundToken('accepted');
    const [, payload] = (await proofFor('accepted', token)).split('.');
    const header = base64url.encode(JSON.stringify({ typ: 'dpop+jwt', alg: 'none', jwk: key.publicJwk }));
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [`${header}.${payload}.`]));
  });

  it('a private key in the header → refused', async () => {
    const token = await boundToken('accepted');
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token, { header: { jwk: key.privateJwk } })]));
  });

  it('a replayed jti on another replica (same Redis) → refused there, and again on the first', async () => {
    const token = await boundToken('accepted');
    const proof = await proofFor('accepted', token);
    expect((await send(first, 'accepted', `DPoP ${token}`, [proof])).status).toBe(200);
    expectProofRefused(await send(second, 'accepted', `DPoP ${token}`, [proof]));
    expectProofRefused(await send(first, 'accepted', `DPoP ${token}`, [proof]));
    expect((await send(second, 'accepted', `DPoP ${token}`, [await proofFor('accepted', token)])).status).toBe(200);
  });
});

describe('server nonce (RFC 9449 §9)', () => {
  it('a missing nonce → 401 use_dpop_nonce with DPoP-Nonce; with it → 200, on the other replica too', async () => {
    const token = await boundToken('nonce');
    const refused = await send(first, 'nonce', `DPoP ${token}`, [await proofFor('nonce', token)]);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: 'use_dpop_nonce' });
    expect(refused.headers.get('www-authenticate')).toMatch(/^DPoP error="use_dpop_nonce"/);
    const nonce = refused.headers.get('dpop-nonce') ?? '';
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const accepted = await send(second, 'nonce', `DPoP ${token}`, [await proofFor('nonce', token, { nonce })]);
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get('dpop-nonce')).toBe(nonce);
  });

  it('a stale or made-up nonce → 401 use_dpop_nonce naming the current one', async () => {
    const token = await boundToken('nonce');
    const refused = await send(first, 'nonce', `DPoP ${token}`, [await proofFor('nonce', token, { nonce: 'AAAAAAAAAAAAAAAAAAAAAA' })]);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: 'use_dpop_nonce' });
    expect(refused.headers.get('dpop-nonce')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('the decision listener (nginx): htm and htu as the proxy describes the request', () => {
  async function ask(originalMethod: string, authorization: string, proof: string): Promise<number> {
    const response = await request(`${decisionUrl}/_mcp_decision`, {
      method: 'GET',
      headers: {
        host: 'gw.example.test',
        'x-mcp-decision-secret': DECISION_SECRET,
        'x-original-method': originalMethod,
        'x-original-uri': '/accepted/mcp?trace=1',
        authorization,
        dpop: proof,
        accept: 'application/json, text/event-stream',
      },
    });
    await response.body.dump();
    return response.statusCode;
  }

  it('a proof for the described method and URI → allowed (200)', async () => {
    const token = await boundToken('accepted');
    expect(await ask('GET', `DPoP ${token}`, await proofFor('accepted', token, { htm: 'GET' }))).toBe(200);
  });

  it('a proof for the method the proxy used to ask, not the one it describes → 401', async () => {
    const token = await boundToken('accepted');
    expect(await ask('DELETE', `DPoP ${token}`, await proofFor('accepted', token, { htm: 'GET' }))).toBe(401);
  });

  it('a proof for the listener\'s own URI → 401', async () => {
    const token = await boundToken('accepted');
    expect(await ask('GET', `DPoP ${token}`, await proofFor('accepted', token, { htm: 'GET', htu: `${PUBLIC}/_mcp_decision` }))).toBe(401);
  });
});
