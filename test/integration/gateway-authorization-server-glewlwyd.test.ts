import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';
import { launchChromium, type Pages } from '../clients/browser.js';
import {
  IDP_CLIENT,
  TestOAuthClient,
  connectSdkClient,
  callToolStatus,
  gatewayAsYaml,
  signingKeySet,
  sparePort,
  startGatewayAs,
  type PersonAtBrowser,
  type RunningGatewayAs,
} from '../helpers/gateway-as.js';
import { signInOnLoginPage, type Credentials } from '../helpers/glewlwyd-login.js';
import { startGlewlwyd, type Glewlwyd } from '../helpers/glewlwyd.js';

/**
 * Glewlwyd (Debian's package, a third-party C OpenID Connect provider) as the organisation's IdP of the gateway's
 * authorization server: the official SDK client discovers the gateway, registers, and sends the person to
 * /oauth/authorize; Chromium follows the gateway's redirect to glewlwyd's real login page, signs in, grants
 * glewlwyd's own consent, comes back to the gateway's consent page and clicks Allow; the SDK redeems the code and
 * calls tools through the gateway. The entitlement comes from glewlwyd's `groups` claim.
 */

const ALICE = { username: 'alice', password: 'alice-password-1', email: 'alice@example.org', claims: { groups: ['calc-admins', 'staff'] } };
const BOB = { username: 'bob', password: 'bob-password-1', email: 'bob@example.org', claims: { groups: ['staff'] } };
const STEP_TIMEOUT_MS = 15_000;

let chromium: Pages;
let calculator: Calculator;
let idp: Glewlwyd;
let gateway: RunningGatewayAs;
let resource: string;
/** The SDK client's redirect URI: a loopback server answering its callback, as a native client's would. */
let callbackServer: Server;
let redirectUri = '';
const callbacksReceived: URL[] = [];

beforeAll(async () => {
  chromium = await launchChromium();
  callbackServer = createServer((request, response) => {
    callbacksReceived.push(new URL(request.url ?? '/', redirectUri));
    response.end('client callback');
  });
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
  calculator = await startCalculator();
  const port = await sparePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  resource = `${publicUrl}/calc/mcp`;
  idp = await startGlewlwyd({
    client: { clientId: IDP_CLIENT.id, clientSecret: IDP_CLIENT.secret, redirectUris: [`${publicUrl}/consent/login/callback`] },
    users: [ALICE, BOB],
    claims: ['groups'],
  });
  // client_secret_post: glewlwyd compares client_secret_basic credentials without form-decoding them, so the default
  // works only for ids and secrets that form-encoding leaves as is (these do: the suite passes with it too).
  gateway = await startGatewayAs(gatewayAsYaml({ idpIssuer: idp.issuer, upstream: calculator.url, port, signInAuthMethod: 'client_secret_post' }), {
    AS_KEYS: await signingKeySet(),
    IDP_SECRET: IDP_CLIENT.secret,
  });
});

afterAll(async () => {
  await chromium?.close();
  callbackServer?.closeAllConnections();
  callbackServer?.close();
  await gateway?.close();
  await idp?.stop();
  await calculator?.close();
});

/**
 * A person in Chromium (a fresh context each time: no session anywhere): from the client's authorization URL at the
 * gateway to glewlwyd's login page and back to the gateway's consent page, where they click Allow.
 */
class PersonInChromium implements PersonAtBrowser {
  /** The gateway's consent pages seen, as text, newest last. */
  readonly consentPages: string[] = [];

  constructor(readonly credentials: Credentials) {}

  async authorize(start: URL, clientRedirectUri: string): Promise<{ code: string }> {
    const page = await chromium.newPage();
    try {
      await page.goto(start.href);
      await page.locator('#username').waitFor({ timeout: STEP_TIMEOUT_MS });
      expect(new URL(page.url()).origin).toBe(new URL(idp.issuer).origin);
      const turn = await signInOnLoginPage(page, this.credentials);
      if (turn.outcome === 'refused') throw new Error(`glewlwyd refused the sign-in: ${turn.message}`);
      const allow = page.getByRole('button', { name: 'Allow' });
      await allow.waitFor({ timeout: STEP_TIMEOUT_MS });
      this.consentPages.push((await page.locator('body').textContent()) ?? '');
      await Promise.all([page.waitForURL((url) => url.href.startsWith(clientRedirectUri), { timeout: STEP_TIMEOUT_MS }), allow.click()]);
      const landed = new URL(page.url());
      const code = landed.searchParams.get('code');
      if (code === null) throw new Error(`no code at the client: ${landed.searchParams.get('error') ?? landed.href}`);
      return { code };
    } finally {
      await page.context().close();
    }
  }
}

describe('the gateway as authorization server, signing people in at glewlwyd (Chromium, the official SDK client)', () => {
  it('an entitled person (groups includes calc-admins) signs in at glewlwyd, allows, and gets calc:write: multiply works', async () => {
    const person = new PersonInChromium(ALICE);
    const oauth = new TestOAuthClient(person, { redirectUrl: redirectUri });
    const client = await connectSdkClient(resource, oauth, 'sdk-glewlwyd-test');
    const consentPage = person.consentPages.at(-1) ?? '';
    expect(consentPage).toContain('SDK test client');
    expect(consentPage).toContain(new URL(redirectUri).host);
    expect(consentPage).toContain('Calculator');

    // The SDK answers multiply's 403 insufficient_scope with a refresh, which the consent and entitlement cover.
    const result = await client.callTool({ name: 'multiply', arguments: { x: 6, y: 7 } });
    expect(JSON.stringify(result.content)).toContain('42');
    await client.close();
    expect(person.consentPages).toHaveLength(1);
    const tokens = oauth.tokens();
    expect(tokens?.scope?.split(' ')).toContain('calc:write');
    const claims = decodeJwt(tokens?.access_token ?? '');
    expect(claims).toMatchObject({ iss: gateway.url, aud: resource });
    // glewlwyd's sub is opaque: the gateway's subject is the IdP's, never the username typed at the login page.
    expect(claims.sub).toEqual(expect.any(String));
    expect(claims.sub).not.toBe(ALICE.username);
  });

  it('a person without the claim gets only mcp:tools: add works, multiply gets 403', async () => {
    const person = new PersonInChromium(BOB);
    const oauth = new TestOAuthClient(person, { redirectUrl: redirectUri });
    const client = await connectSdkClient(resource, oauth, 'sdk-glewlwyd-test');
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(JSON.stringify(result.content)).toContain('5');
    await client.close();
    const tokens = oauth.tokens();
    expect(tokens?.scope).toBe('mcp:tools');
    expect(await callToolStatus(resource, tokens?.access_token ?? '', 'multiply')).toBe(403);
  });

  it('a wrong password at glewlwyd gets no code: the client is never called back and holds no token', async () => {
    const person = new PersonInChromium({ username: ALICE.username, password: 'not-her-password' });
    const oauth = new TestOAuthClient(person, { redirectUrl: redirectUri });
    const callbacksBefore = callbacksReceived.length;
    await expect(connectSdkClient(resource, oauth, 'sdk-glewlwyd-test')).rejects.toThrow(/Authentication error/);
    expect(oauth.code).toBeUndefined();
    expect(oauth.tokens()).toBeUndefined();
    expect(person.consentPages).toHaveLength(0);
    expect(callbacksReceived).toHaveLength(callbacksBefore);
  });
});
