import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, decodeJwt, importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';
import type { DevAuthServer } from '../../src/authserver/types.js';
import { SIGN_IN_PREFIX } from '../../src/client/browser.js';
import { runLoginCommand } from '../../src/client/login-command.js';
import { allTokens, CONFIG_DIR_VARIABLE, readTokenStore, saveToken, type StoredToken } from '../../src/client/token-store.js';
import { createDpopKey } from '../helpers/dpop.js';
import { IDP_CLIENT, TestBrowser, gatewayAsYaml, signingKeySet, startEnterpriseIdp, startGatewayAs, type RunningGatewayAs } from '../helpers/gateway-as.js';
import { freePort } from '../helpers/net.js';

/**
 * DPoP (RFC 9449) from the gateway's own authorization server: `login` (which sends proofs when both servers take
 * them) through the whole flow against a route without `tokens` and `dpop: { mode: required }`, the person signed
 * in at the organisation's IdP and consenting on the gateway's page; and a client that sends no proof.
 */

const REDIRECT = 'http://127.0.0.1:9/callback';
/** Nothing redirects here: the browser stops at login's own loopback page. */
const NEVER = 'http://never.invalid/';

let calculator: Calculator;
let idp: DevAuthServer;
let gateway: RunningGatewayAs;
let required: string;
let accepted: string;
let bearerOnly: string;
let withNonce: string;
let configDir: string;
const people = { next: 'alice', groups: { alice: ['calc-admins'] } as Record<string, string[]> };

/** `login <resource> --no-browser`, the person played by a browser that signs in at the IdP and allows on the consent page. */
async function login(resource: string, dir = configDir): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const visits: Promise<unknown>[] = [];
  const output = {
    stdout: () => undefined,
    stderr: (text: string) => {
      stderr += text;
      for (const line of text.split('\n')) {
        if (!line.startsWith(SIGN_IN_PREFIX)) continue;
        visits.push(new TestBrowser().navigate(new URL(line.slice(SIGN_IN_PREFIX.length)), NEVER).catch((error: unknown) => (stderr += `(browser: ${String(error)})\n`)));
      }
    },
  };
  const code = await runLoginCommand([resource, '--no-browser', '--timeout', '5s'], output, { [CONFIG_DIR_VARIABLE]: dir });
  await Promise.all(visits);
  return { code, stderr };
}

async function storedToken(dir = configDir): Promise<StoredToken> {
  const [stored] = allTokens(await readTokenStore(join(dir, 'tokens.json')));
  if (stored === undefined) throw new Error('login stored no token');
  return stored;
}

function publicPart(jwk: JWK): JWK {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
}

async function postToken(form: Record<string, string>, proof?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gateway.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(proof === undefined ? {} : { dpop: proof }) },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** An MCP `initialize` with `authorization`: the HTTP status. */
async function initialize(resource: string, authorization: string, proof?: string): Promise<number> {
  const response = await fetch(resource, {
    method: 'POST',
    headers: {
      authorization,
      ...(proof === undefined ? {} : { dpop: proof }),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }),
  });
  await response.body?.cancel();
  return response.status;
}

beforeAll(async () => {
  calculator = await startCalculator();
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  required = `${publicUrl}/calc/mcp`;
  accepted = `${publicUrl}/calc-accepted/mcp`;
  bearerOnly = `${publicUrl}/calc-bearer/mcp`;
  withNonce = `${publicUrl}/calc-nonce/mcp`;
  idp = await startEnterpriseIdp(publicUrl, people);
  // The `calc` route (last in the YAML) requires DPoP; a second route takes Bearer and DPoP tokens, a third Bearer only.
  const yaml = `${gatewayAsYaml({ idpIssuer: idp.issuer, upstream: calculator.url, port })}    dpop: { mode: required }
  - name: calc-accepted
    path: /calc-accepted/mcp
    upstream: { url: "${calculator.url}" }
    scopes_supported: [mcp:tools]
    dpop: { mode: accepted, algorithms: [ES256, ES384] }
  - name: calc-bearer
    path: /calc-bearer/mcp
    upstream: { url: "${calculator.url}" }
    scopes_supported: [mcp:tools]
    dpop: { mode: bearer_only, algorithms: [RS512] }
  - name: calc-nonce
    path: /calc-nonce/mcp
    upstream: { url: "${calculator.url}" }
    scopes_supported: [mcp:tools]
    dpop: { mode: required, require_nonce: true }
`;
  gateway = await startGatewayAs(yaml, { AS_KEYS: await signingKeySet(), IDP_SECRET: IDP_CLIENT.secret });
  configDir = await mkdtemp(join(tmpdir(), 'mcp-gateway-as-dpop-'));
});

afterAll(async () => {
  await gateway?.close();
  await idp?.close();
  await calculator?.close();
});

describe("the gateway's authorization server issues DPoP-bound tokens", () => {
  it("advertises dpop_signing_alg_values_supported: the algorithms of its routes that take DPoP", async () => {
    const metadata = (await (await fetch(`${gateway.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata.dpop_signing_alg_values_supported).toEqual(['ES256', 'ES384', 'PS256', 'RS256', 'EdDSA', 'Ed25519']);
  });

  it('login completes the flow on a required route: the access token is bound by cnf.jkt to the stored key and tools/list works', async () => {
    const { code, stderr } = await login(required);
    expect(stderr).toMatch(/authorized: scope "[^"]*", expires in \d+ s, DPoP-bound/);
    expect(stderr).toMatch(/tools\/list: \d+ tool\(s\)/);
    expect(code).toBe(0);
    const stored = await storedToken();
    expect(stored.authorizationServer).toBe(gateway.url);
    expect(stored.tokenType).toBe('DPoP');
    expect(decodeJwt(stored.accessToken).cnf).toEqual({ jkt: await calculateJwkThumbprint(publicPart(stored.dpopKey as JWK)) });
  });

  it('the bound access token sent as Bearer is refused by the required route', async () => {
    const stored = await storedToken();
    expect(decodeJwt(stored.accessToken).cnf).toBeDefined();
    expect(await initialize(required, `Bearer ${stored.accessToken}`)).toBe(401);
  });

  it("login refreshes with a proof by the stored key: the public client's refresh token is bound and the new token has the same cnf.jkt", async () => {
    const path = join(configDir, 'tokens.json');
    const before = await storedToken();
    expect(before.refreshToken).toBeDefined();
    await saveToken(path, { ...before, expiresAt: new Date(Date.now() - 60_000).toISOString() });
    const { code, stderr } = await login(required);
    expect(stderr).toContain('refreshed: scope');
    expect(code).toBe(0);
    const after = await storedToken();
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(decodeJwt(after.accessToken).cnf).toEqual(decodeJwt(before.accessToken).cnf);
  });

  it("a refresh with another key's proof, or with none, is refused; the holder of the key still refreshes", async () => {
    const stored = await storedToken();
    const form = { grant_type: 'refresh_token', refresh_token: stored.refreshToken ?? '', client_id: stored.clientId, resource: required };
    const tokenEndpoint = { htm: 'POST', htu: `${gateway.url}/oauth/token` };
    const otherKey = await createDpopKey();
    const withOtherKey = await postToken(form, await otherKey.proof(tokenEndpoint));
    expect(withOtherKey.status).toBe(400);
    expect(withOtherKey.body.error).toBe('invalid_grant');
    const withoutProof = await postToken(form);
    expect(withoutProof.status).toBe(400);
    expect(withoutProof.body.error).toBe('invalid_grant');

    const privateJwk = stored.dpopKey as JWK;
    const proof = await new SignJWT({ jti: randomBytes(16).toString('hex'), ...tokenEndpoint })
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicPart(privateJwk) })
      .setIssuedAt()
      .sign(await importJWK(privateJwk, 'ES256'));
    const byHolder = await postToken(form, proof);
    expect(byHolder.status).toBe(200);
    expect(byHolder.body.token_type).toBe('DPoP');
    expect(decodeJwt(String(byHolder.body.access_token)).cnf).toEqual(decodeJwt(stored.accessToken).cnf);
  });

  it("login on a route requiring the resource's nonce: the server nonces of the route and of the authorization server, one origin, both work (code and refresh)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-gateway-as-dpop-nonce-'));
    const first = await login(withNonce, dir);
    expect(first.stderr).toMatch(/tools\/list: \d+ tool\(s\)/);
    expect(first.code).toBe(0);
    const before = await storedToken(dir);
    expect(before.tokenType).toBe('DPoP');
    await saveToken(join(dir, 'tokens.json'), { ...before, expiresAt: new Date(Date.now() - 60_000).toISOString() });
    const refreshed = await login(withNonce, dir);
    expect(refreshed.stderr).toContain('refreshed: scope');
    expect(refreshed.stderr).toMatch(/tools\/list: \d+ tool\(s\)/);
    expect(refreshed.code).toBe(0);
    expect(decodeJwt((await storedToken(dir)).accessToken).cnf).toEqual(decodeJwt(before.accessToken).cnf);
  });
});

async function registerClient(): Promise<string> {
  const response = await fetch(`${gateway.url}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Raw client', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], token_endpoint_auth_method: 'none' }),
  });
  return ((await response.json()) as { client_id: string }).client_id;
}

/** The person signs in and allows `clientId` (a new public client by default) for `resource`: the code and its PKCE verifier. */
async function authorizationCode(resource: string, clientId?: string): Promise<{ clientId: string; code: string; verifier: string }> {
  const client = clientId ?? (await registerClient());
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${gateway.url}/oauth/authorize`);
  for (const [key, value] of Object.entries({
    response_type: 'code',
    client_id: client,
    redirect_uri: REDIRECT,
    resource,
    scope: 'mcp:tools',
    state: 'state-1',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })) authorize.searchParams.set(key, value);
  const { code } = await new TestBrowser().authorize(authorize, REDIRECT);
  return { clientId: client, code, verifier };
}

/** The token request of an authorization code for `resource`. */
function codeForm(resource: string, { clientId, code, verifier }: { clientId: string; code: string; verifier: string }): Record<string, string> {
  return { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId, resource };
}

/** The authorization code grant for `resource` by a new public client, with `proof` when given. */
async function redeem(resource: string, proof?: (tokenEndpoint: { htm: string; htu: string }) => Promise<string>) {
  return postToken(codeForm(resource, await authorizationCode(resource)), await proof?.({ htm: 'POST', htu: `${gateway.url}/oauth/token` }));
}

describe('raw clients at the token endpoint', () => {
  it('a client that sends no proof gets a Bearer token: refused by the required route, taken by the accepted route', async () => {
    const answer = await redeem(accepted);
    expect(answer.status).toBe(200);
    expect(answer.body.token_type).toBe('Bearer');
    const accessToken = String(answer.body.access_token);
    expect(decodeJwt(accessToken).cnf).toBeUndefined();
    expect(await initialize(accepted, `Bearer ${accessToken}`)).toBe(200);
    expect(await initialize(required, `Bearer ${accessToken}`)).toBe(401);
  });

  it('a proof sent for a bearer_only route is ignored: a Bearer token that route takes (RFC 9449 §5)', async () => {
    const key = await createDpopKey();
    const answer = await redeem(bearerOnly, (tokenEndpoint) => key.proof(tokenEndpoint));
    expect(answer.status).toBe(200);
    expect(answer.body.token_type).toBe('Bearer');
    const accessToken = String(answer.body.access_token);
    expect(decodeJwt(accessToken).cnf).toBeUndefined();
    expect(await initialize(bearerOnly, `Bearer ${accessToken}`)).toBe(200);
  });

  it('a proof sent for a DPoP route binds the token (the same raw client, for contrast)', async () => {
    const key = await createDpopKey();
    const answer = await redeem(accepted, (tokenEndpoint) => key.proof(tokenEndpoint));
    expect(answer.status).toBe(200);
    expect(answer.body.token_type).toBe('DPoP');
    expect(decodeJwt(String(answer.body.access_token)).cnf).toEqual({ jkt: key.jkt });
  });

  it("a proof replayed at the token endpoint (the same client's next code) is refused; a fresh proof by the same key is not", async () => {
    const key = await createDpopKey();
    const clientId = await registerClient();
    const tokenEndpoint = { htm: 'POST', htu: `${gateway.url}/oauth/token` };
    const proof = await key.proof(tokenEndpoint);
    const first = await postToken(codeForm(accepted, await authorizationCode(accepted, clientId)), proof);
    expect(first.status).toBe(200);
    const replayed = await postToken(codeForm(accepted, await authorizationCode(accepted, clientId)), proof);
    expect(replayed.status).toBe(400);
    expect(replayed.body.error).toBe('invalid_grant');
    const fresh = await postToken(codeForm(accepted, await authorizationCode(accepted, clientId)), await key.proof(tokenEndpoint));
    expect(fresh.status).toBe(200);
    expect(decodeJwt(String(fresh.body.access_token)).cnf).toEqual({ jkt: key.jkt });
  });
});
