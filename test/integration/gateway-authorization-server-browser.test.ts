import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';
import type { DevAuthServer } from '../../src/authserver/types.js';
import { launchChromium, type Pages } from '../clients/browser.js';
import { IDP_CLIENT, gatewayAsYaml, signingKeySet, sparePort, startEnterpriseIdp, startGatewayAs, type RunningGatewayAs } from '../helpers/gateway-as.js';

/** The client's redirect URI: a loopback server answering its callback, as a native client's would. */
let REDIRECT = '';
let client: Server;

let chromium: Pages;
let calculator: Calculator;
let idp: DevAuthServer;
let gateway: RunningGatewayAs;
let publicUrl: string;
const people = { next: 'alice', groups: { alice: ['calc-admins'] } as Record<string, string[]> };

beforeAll(async () => {
  chromium = await launchChromium();
  client = createServer((_request, response) => response.end('client callback'));
  await new Promise<void>((resolve) => client.listen(0, '127.0.0.1', resolve));
  REDIRECT = `http://127.0.0.1:${(client.address() as AddressInfo).port}/callback`;
  calculator = await startCalculator();
  const port = await sparePort();
  publicUrl = `http://127.0.0.1:${port}`;
  idp = await startEnterpriseIdp(publicUrl, people);
  gateway = await startGatewayAs(gatewayAsYaml({ idpIssuer: idp.issuer, upstream: calculator.url, port }), {
    AS_KEYS: await signingKeySet(),
    IDP_SECRET: IDP_CLIENT.secret,
  });
});

afterAll(async () => {
  await chromium?.close();
  client?.closeAllConnections();
  client?.close();
  await gateway?.close();
  await idp?.close();
  await calculator?.close();
});

async function authorizationPage(page: Page, clientName: string): Promise<void> {
  const registration = await fetch(`${publicUrl}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: clientName, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  const { client_id: clientId } = (await registration.json()) as { client_id: string };
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  const url = new URL(`${publicUrl}/oauth/authorize`);
  const params = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, resource: `${publicUrl}/calc/mcp`, scope: 'mcp:tools', state: 'browser-state', code_challenge: challenge, code_challenge_method: 'S256' };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  await page.goto(url.href);
}

/** Clicks a consent button; the POST's Origin and the URL the browser ends at. */
async function answer(page: Page, label: 'Allow' | 'Deny'): Promise<{ origin: string | undefined; landed: URL }> {
  const [post] = await Promise.all([
    page.waitForRequest((request) => request.method() === 'POST'),
    page.waitForURL((url) => url.href.startsWith(REDIRECT)),
    page.click(`button:text("${label}")`),
  ]);
  return { origin: (await post.allHeaders()).origin, landed: new URL(page.url()) };
}

describe('the gateway as authorization server in a real browser (Debian\'s Chromium)', () => {
  it('signs in at the IdP, shows the consent page (client, redirect host, server, scopes), and Allow lands a code with iss and state', async () => {
    const page = await chromium.newPage();
    await authorizationPage(page, 'Browser <b>client</b>');
    expect(new URL(page.url()).pathname).toMatch(/^\/oauth\/interaction\//);
    expect(await page.locator('h1').textContent()).toBe('Allow Browser <b>client</b> to use Calculator?');
    const body = (await page.locator('body').textContent()) ?? '';
    expect(body).toContain(new URL(REDIRECT).host);
    expect(body).toContain('calc:write');
    const { origin, landed } = await answer(page, 'Allow');
    expect(origin).toBe(publicUrl);
    expect(landed.searchParams.get('code')).toBeTruthy();
    expect(landed.searchParams.get('iss')).toBe(publicUrl);
    expect(landed.searchParams.get('state')).toBe('browser-state');
  });

  it('Deny lands access_denied with the state', async () => {
    const page = await chromium.newPage();
    await authorizationPage(page, 'Denied client');
    const { landed } = await answer(page, 'Deny');
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe('browser-state');
  });
});
