import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt } from 'jose';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoStackOnFreePorts, type DemoStack } from '../../examples/demo/stack.js';
import { TestBrowser, TestOAuthClient } from '../helpers/gateway-as.js';

const REDIRECT = 'http://127.0.0.1:9/callback';

let stack: DemoStack;

beforeAll(async () => {
  stack = await startDemoStackOnFreePorts({ logger: pino({ level: 'silent' }) });
});

afterAll(async () => {
  await stack?.close();
});

describe('npm run demo: the gateway as authorization server (/calc-as/mcp)', () => {
  it('takes the official SDK client through registration, sign-in at the IdP-like dev server and consent to a tool call', async () => {
    const url = new URL(`${stack.gatewayUrl}/calc-as/mcp`);
    const browser = new TestBrowser();
    const oauth = new TestOAuthClient(browser, { redirectUrl: REDIRECT });
    const client = new Client({ name: 'demo-test', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(url, { authProvider: oauth }))).rejects.toBeInstanceOf(UnauthorizedError);
    const transport = new StreamableHTTPClientTransport(url, { authProvider: oauth });
    await transport.finishAuth(oauth.code ?? '');
    await client.connect(transport);
    const result = await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } });
    expect(JSON.stringify(result.content)).toContain('42');
    await client.close();
    expect(decodeJwt(oauth.tokens()?.access_token ?? '')).toMatchObject({ iss: stack.gatewayUrl, aud: url.href, sub: 'demo-user' });
    expect(browser.consentPages).toHaveLength(1);
  });
});
