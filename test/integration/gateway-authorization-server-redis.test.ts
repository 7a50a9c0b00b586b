import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';
import type { DevAuthServer } from '../../src/authserver/types.js';
import {
  IDP_CLIENT,
  TestBrowser,
  gatewayAsYaml,
  signingKeySet,
  sparePort,
  startEnterpriseIdp,
  startGatewayAs,
  type RunningGatewayAs,
} from '../helpers/gateway-as.js';
import { pino } from 'pino';
import { runClientsCommand } from '../../src/gateway/clients-command.js';
import { compileOrThrow } from '../helpers/gateway.js';
import { startRedis, uniquePrefix, type RedisHandle } from '../helpers/redis.js';

const REDIRECT = 'http://127.0.0.1:9/callback';

let redis: RedisHandle;
let calculator: Calculator;
let idp: DevAuthServer;
let env: NodeJS.ProcessEnv;
let publicPort: number;
let replicaPort: number;
let yamlOf: (port: number) => string;
const running: RunningGatewayAs[] = [];
const people = { next: 'alice', groups: { alice: ['calc-admins'] } as Record<string, string[]> };

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function start(port: number): Promise<RunningGatewayAs> {
  const gateway = await startGatewayAs(yamlOf(port), env);
  running.push(gateway);
  return gateway;
}

async function postForm(base: string, path: string, form: Record<string, string>) {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function authorizationUrl(base: string, clientId: string, challenge: string): URL {
  const url = new URL(`${base}/oauth/authorize`);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    resource: `http://127.0.0.1:${publicPort}/calc/mcp`,
    scope: 'mcp:tools',
    state: 's',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url;
}

beforeAll(async () => {
  redis = await startRedis();
  calculator = await startCalculator();
  publicPort = await sparePort();
  replicaPort = await sparePort();
  const publicUrl = `http://127.0.0.1:${publicPort}`;
  idp = await startEnterpriseIdp(publicUrl, people);
  env = { AS_KEYS: await signingKeySet(), IDP_SECRET: IDP_CLIENT.secret, REDIS_URL: redis.url, KEY_SECRET: randomBytes(32).toString('hex') };
  const cache = `cache:\n  redis_url: \${env:REDIS_URL}\n  key_secret: \${env:KEY_SECRET}\n  key_prefix: "${uniquePrefix('gateway-as')}"`;
  yamlOf = (port) => gatewayAsYaml({ idpIssuer: idp.issuer, upstream: calculator.url, port, publicPort, extra: cache });
});

afterAll(async () => {
  await Promise.all(running.map((gateway) => gateway.close()));
  await idp?.close();
  await calculator?.close();
  await redis?.stop();
});

describe('the gateway as authorization server on a shared Redis', () => {
  it('authorizes on one replica, exchanges the code and refreshes on another, and a restart keeps every client', async () => {
    const first = await start(publicPort);
    const second = await start(replicaPort);
    const registration = await fetch(`${first.url}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Replica test', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' }),
    });
    expect(registration.status).toBe(201);
    const clientId = String(((await registration.json()) as { client_id: string }).client_id);

    const browser = new TestBrowser();
    const { verifier, challenge } = pkce();
    const { code } = await browser.authorize(authorizationUrl(first.url, clientId, challenge), REDIRECT);
    const resource = `http://127.0.0.1:${publicPort}/calc/mcp`;
    const exchanged = await postForm(second.url, '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.scope).toBe('mcp:tools');

    // The first replica goes away and comes back: the client, its consent and its refresh token survive.
    await first.close();
    running.splice(running.indexOf(first), 1);
    const restarted = await start(publicPort);
    const refreshed = await postForm(restarted.url, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(exchanged.body.refresh_token), client_id: clientId, resource });
    expect(refreshed.status).toBe(200);
    const pages = browser.consentPages.length;
    const again = pkce();
    const { code: secondCode } = await browser.authorize(authorizationUrl(restarted.url, clientId, again.challenge), REDIRECT);
    expect(browser.consentPages.length).toBe(pages);
    const secondExchange = await postForm(second.url, '/oauth/token', { grant_type: 'authorization_code', code: secondCode, code_verifier: again.verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
    expect(secondExchange.status).toBe(200);
  });

  it('refuses a code replayed on the other replica', async () => {
    // The replica behind the public URL: the consent form is posted from that origin.
    const first = running.find((gateway) => gateway.url.endsWith(`:${publicPort}`)) ?? (await start(publicPort));
    const other = await start(await sparePort());
    const registration = await fetch(`${first.url}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Replay test', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    });
    const clientId = String(((await registration.json()) as { client_id: string }).client_id);
    const { verifier, challenge } = pkce();
    const { code } = await new TestBrowser().authorize(authorizationUrl(first.url, clientId, challenge), REDIRECT);
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId, resource: `http://127.0.0.1:${publicPort}/calc/mcp` };
    expect((await postForm(first.url, '/oauth/token', form)).status).toBe(200);
    const replay = await postForm(other.url, '/oauth/token', form);
    expect(replay.body.error).toBe('invalid_grant');
  });

  it('clients list|revoke: an operator lists consents and withdraws one; its tokens stop working and consent is asked again', async () => {
    const gateway = running.find((running) => running.url.endsWith(`:${publicPort}`)) ?? (await start(publicPort));
    const registration = await fetch(`${gateway.url}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Withdrawn', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' }),
    });
    const clientId = String(((await registration.json()) as { client_id: string }).client_id);
    const browser = new TestBrowser();
    const { verifier, challenge } = pkce();
    const { code } = await browser.authorize(authorizationUrl(gateway.url, clientId, challenge), REDIRECT);
    const resource = `http://127.0.0.1:${publicPort}/calc/mcp`;
    const tokens = await postForm(gateway.url, '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
    expect(tokens.status).toBe(200);

    const config = compileOrThrow(yamlOf(publicPort), env);
    const silent = pino({ level: 'silent' });
    const listed = await runClientsCommand(config, 'list', { client: clientId }, silent);
    expect(listed).toMatchObject({ ok: true });
    if (listed.ok) expect(listed.value).toMatch(new RegExp(`^${clientId}\talice\t`, 'm'));
    expect(await runClientsCommand(config, 'revoke', { client: clientId, subject: 'alice' }, silent)).toEqual({ ok: true, value: 'revoked 1 consent(s)\n' });

    const refreshed = await postForm(gateway.url, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(tokens.body.refresh_token), client_id: clientId, resource });
    expect(refreshed.body.error).toBe('invalid_grant');
    const pages = browser.consentPages.length;
    await browser.authorize(authorizationUrl(gateway.url, clientId, pkce().challenge), REDIRECT);
    expect(browser.consentPages.length).toBe(pages + 1);
  });

  it('clients revoke refuses to run without a filter', async () => {
    const config = compileOrThrow(yamlOf(publicPort), env);
    expect(await runClientsCommand(config, 'revoke', {}, pino({ level: 'silent' }))).toEqual({ ok: false, problem: 'revoke needs --subject or --client (or both)' });
  });
});
