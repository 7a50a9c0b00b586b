import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, decodeJwt, type JWK } from 'jose';
import { Provider, type Configuration } from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';
import type { Check } from '../../src/client/check.js';
import { runProbeCommand } from '../../src/client/probe-command.js';
import { allTokens, CONFIG_DIR_VARIABLE, readTokenStore, saveToken } from '../../src/client/token-store.js';
import { createMemoryStore } from '../../src/cache/memory-store.js';
import { assembleGateway } from '../../src/gateway/assemble.js';
import type { Gateway } from '../../src/gateway/build.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { compileOrThrow } from '../helpers/gateway.js';
import { runLogin } from '../helpers/login.js';
import { freePort } from '../helpers/net.js';

/**
 * `login` through the whole DPoP flow (RFC 9449) with real parts: oidc-provider with DPoP enabled (dynamic
 * registration, PKCE, resource indicators, JWT access tokens bound by cnf.jkt), the gateway in front of the example
 * calculator with `dpop.mode: required`, and login itself (the user's sign-in played by following redirects).
 */

const SCOPE = 'mcp:tools';
let authServer: Server;
let issuer: string;
let calculator: Calculator;
let gateway: Gateway;
let resource: string;
let configDir: string;

/** oidc-provider with DPoP on; every sign-in is "alice" and every consent is given at once. */
function providerConfiguration(audience: string): Configuration {
  const signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  return {
    jwks: { keys: [{ ...signingKey, alg: 'ES256', use: 'sig', kid: 'k1' }] },
    // Resource scopes come from getResourceServerInfo; these are the OpenID Connect ones.
    scopes: ['openid', 'offline_access'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    pkce: { required: () => true },
    // Refresh tokens without offline_access: a DPoP-bound one, refreshed with a proof by the same key (RFC 9449 §5).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      dPoP: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => false,
        getResourceServerInfo: () => ({ scope: SCOPE, audience, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
      },
    },
  };
}

/** Finishes every interaction at once: signed in as alice, the requested scope for the requested resource granted. */
async function finishInteraction(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const clientId = String(details.params.client_id);
  const grant = new provider.Grant({ accountId: 'alice', clientId });
  const { resource: requested, scope } = details.params;
  grant.addResourceScope(typeof requested === 'string' ? requested : resource, typeof scope === 'string' ? scope : SCOPE);
  await provider.interactionFinished(req, res, { login: { accountId: 'alice' }, consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: false });
}

beforeAll(async () => {
  authServer = createServer();
  await new Promise<void>((resolve) => authServer.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(authServer.address() as AddressInfo).port}`;
  const gatewayPort = await freePort();
  resource = `http://127.0.0.1:${gatewayPort}/calc/mcp`;
  const provider = new Provider(issuer, providerConfiguration(resource));
  const oidc = provider.callback();
  authServer.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    if (path.startsWith('/interaction/')) {
      finishInteraction(provider, req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    }
    else {
      if (path === '/.well-known/oauth-authorization-server') req.url = '/.well-known/openid-configuration';
      void oidc(req, res);
    }
  });
  calculator = await startCalculator({ port: 0 });
  const config = compileOrThrow(`
public_url: http://127.0.0.1:${gatewayPort}
allow_insecure_http: true
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: ${calculator.url} }
    authorization_servers: [${issuer}]
    scopes_supported: [${SCOPE}]
    tokens: { jwt: { issuer: ${issuer}, algorithms: [ES256] } }
    dpop: { mode: required }
`);
  // On the port public_url names: login reaches the gateway at the resource it advertises.
  gateway = assembleGateway(config, { logger: captureLogs().logger, cache: createMemoryStore() });
  await gateway.app.listen({ host: '127.0.0.1', port: gatewayPort });
  configDir = await mkdtemp(join(tmpdir(), 'mcp-login-dpop-'));
});

afterAll(async () => {
  await gateway?.close();
  await calculator?.close();
  authServer?.closeAllConnections();
  await new Promise((resolve) => authServer?.close(resolve));
});

describe('login obtains, stores and uses DPoP-bound tokens', () => {
  it('401 (DPoP challenge) → discovery → DCR → PKCE + resource + proof at the token endpoint → DPoP token; tools/list with proofs', async () => {
    const { code, stderr } = await runLogin([resource], { [CONFIG_DIR_VARIABLE]: configDir });
    expect(stderr).toContain('DPoP: the resource and');
    expect(stderr).toMatch(/authorized: scope "[^"]*", expires in \d+ s, DPoP-bound/);
    expect(stderr).toMatch(/tools\/list: \d+ tool\(s\)/);
    expect(code).toBe(0);

    const [stored] = allTokens(await readTokenStore(join(configDir, 'tokens.json')));
    expect(stored?.tokenType).toBe('DPoP');
    const dpopKey = stored?.dpopKey as JWK;
    expect(dpopKey.d).toBeDefined();
    const publicKey = { kty: dpopKey.kty, crv: dpopKey.crv, x: dpopKey.x, y: dpopKey.y };
    expect(decodeJwt(stored?.accessToken ?? '').cnf).toEqual({ jkt: await calculateJwkThumbprint(publicKey) });
  });

  it('the stored DPoP token is used again with the stored key; sent as Bearer it is refused', async () => {
    const { code, stderr } = await runLogin([resource], { [CONFIG_DIR_VARIABLE]: configDir });
    expect(stderr).toContain(`using the stored token for ${resource}`);
    expect(code).toBe(0);
    const [stored] = allTokens(await readTokenStore(join(configDir, 'tokens.json')));
    const asBearer = await fetch(resource, {
      method: 'POST',
      headers: { authorization: `Bearer ${stored?.accessToken ?? ''}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(asBearer.status).toBe(401);
  });

  it('an expired DPoP token is refreshed with a proof by the stored key, and the new token is bound to the same key', async () => {
    const path = join(configDir, 'tokens.json');
    const [before] = allTokens(await readTokenStore(path));
    if (before === undefined) throw new Error('no stored token');
    expect(before.refreshToken).toBeDefined();
    await saveToken(path, { ...before, expiresAt: new Date(Date.now() - 60_000).toISOString() });
    const { code, stderr } = await runLogin([resource], { [CONFIG_DIR_VARIABLE]: configDir });
    expect(stderr).toContain('refreshed: scope');
    expect(code).toBe(0);
    const [after] = allTokens(await readTokenStore(path));
    expect(after?.accessToken).not.toBe(before.accessToken);
    expect(after?.dpopKey).toEqual(before.dpopKey);
    expect(decodeJwt(after?.accessToken ?? '').cnf).toEqual(decodeJwt(before.accessToken).cnf);
  });

  it('probe --token with the stored key: the binding checks and the token is accepted with a proof; without the key it is refused', async () => {
    const [stored] = allTokens(await readTokenStore(join(configDir, 'tokens.json')));
    const probeWith = async (dir: string) => {
      let stdout = '';
      const code = await runProbeCommand([resource, '--json', '--timeout', '5s', `--token=${stored?.accessToken ?? ''}`], { stdout: (text) => (stdout += text), stderr: () => undefined }, { [CONFIG_DIR_VARIABLE]: dir });
      const { checks } = JSON.parse(stdout) as { checks: Check[] };
      return { code, byId: new Map(checks.map((check) => [check.id, check])) };
    };
    const withKey = await probeWith(configDir);
    expect(withKey.byId.get('token-binding')?.status).toBe('pass');
    expect(withKey.byId.get('token-accepted')).toMatchObject({ status: 'pass' });
    expect([...withKey.byId.values()].filter((check) => check.status === 'fail')).toEqual([]);
    expect(withKey.code).toBe(0);

    const withoutKey = await probeWith(await mkdtemp(join(tmpdir(), 'mcp-probe-dpop-')));
    expect(withoutKey.byId.get('token-binding')?.status).toBe('warn');
    expect(withoutKey.byId.get('token-accepted')).toMatchObject({ status: 'fail' });
    expect(withoutKey.code).toBe(1);
  });
});
