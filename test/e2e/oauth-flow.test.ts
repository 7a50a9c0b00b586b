import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClientMetadataServer } from '../../src/client/client-metadata-server.js';
import { headlessClientMetadata } from '../../examples/demo/headless-oauth-provider.js';
import { freePort, startDemoStackOnFreePorts, type DemoStack } from '../../examples/demo/stack.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { runScript } from '../helpers/run-script.js';
import { connectTraced, eventsOf, REDIRECT_URL, type TracedClient } from './traced-client.js';

let stack: DemoStack;
let logs: () => string;
let calc: URL;
const clients: TracedClient[] = [];

beforeAll(async () => {
  const capture = captureLogs();
  logs = capture.text;
  stack = await startDemoStackOnFreePorts({ logger: capture.logger });
  calc = new URL(`${stack.gatewayUrl}/calc/mcp`);
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.session.close()));
  await stack.close();
});

async function connect(...args: Parameters<typeof connectTraced>): Promise<TracedClient> {
  const client = await connectTraced(...args);
  clients.push(client);
  return client;
}

const FIRST_AUTHORIZATION = ['challenge', 'resource_metadata', 'authorization_server_metadata'];
const AUTHORIZE = ['authorization', 'authorization_response', 'token'];

describe('MCP authorization through the gateway, official SDK client, real authorization server (JWT route)', () => {
  it('DCR: 401 → PRM → AS metadata → registration → PKCE S256 + resource → token → tools/call', async () => {
    const client = await connect(calc);
    expect(await client.callTool('add', { a: 2, b: 3 })).toBe('5');

    expect(client.authorizationSteps()).toEqual([...FIRST_AUTHORIZATION, 'registration', ...AUTHORIZE]);
    const [challenge] = eventsOf(client.events, 'challenge');
    expect(challenge).toEqual({
      kind: 'challenge',
      status: 401,
      error: undefined,
      scope: 'mcp:tools',
      resourceMetadata: `${stack.gatewayUrl}/.well-known/oauth-protected-resource/calc/mcp`,
    });
    expect(eventsOf(client.events, 'resource_metadata')[0]).toMatchObject({
      resource: calc.href,
      authorizationServers: [stack.authServer.issuer],
      scopesSupported: ['mcp:tools', 'calc:write'],
    });
    expect(eventsOf(client.events, 'authorization_server_metadata')[0]).toMatchObject({
      issuer: stack.authServer.issuer,
      codeChallengeMethods: ['S256'],
      clientIdMetadataDocuments: true,
    });
    const [registration] = eventsOf(client.events, 'registration');
    expect(registration?.status).toBe(201);
    expect(eventsOf(client.events, 'authorization')[0]).toEqual({
      kind: 'authorization',
      clientId: registration?.clientId,
      scope: 'mcp:tools',
      resource: calc.href,
      codeChallengeMethod: 'S256',
      redirectUri: REDIRECT_URL,
    });
    expect(eventsOf(client.events, 'token')[0]).toMatchObject({
      status: 200,
      grantType: 'authorization_code',
      resource: calc.href,
      scope: 'mcp:tools',
      refreshToken: true,
    });

    // The access token is an RFC 9068 JWT bound to this route's resource, as the gateway requires.
    const token = client.provider.tokens()?.access_token ?? '';
    expect(decodeProtectedHeader(token).typ).toBe('at+jwt');
    expect(decodeJwt(token)).toMatchObject({ iss: stack.authServer.issuer, aud: calc.href, scope: 'mcp:tools' });
    expect(eventsOf(client.events, 'mcp').map((event) => [event.rpcMethod, event.status])).toContainEqual(['tools/call', 200]);
  });

  it('Client ID Metadata Document on loopback: the client_id is its URL, the server fetches it, no registration', async () => {
    const base = { redirectUrl: REDIRECT_URL, clientName: 'e2e metadata-document client' };
    const document = await startClientMetadataServer(headlessClientMetadata(base));
    try {
      const client = await connect(calc, { ...base, clientMetadataUrl: document.url });
      expect(await client.callTool('add', { a: 40, b: 2 })).toBe('42');

      expect(client.authorizationSteps()).toEqual([...FIRST_AUTHORIZATION, 'client_id_metadata_document', ...AUTHORIZE]);
      expect(eventsOf(client.events, 'authorization')[0]?.clientId).toBe(document.url);
      expect(document.fetches).toBeGreaterThan(0);
      expect(decodeJwt(client.provider.tokens()?.access_token ?? '')).toMatchObject({ client_id: document.url, aud: calc.href });
    } finally {
      await document.close();
    }
  });

  it('C14 step-up: multiply without calc:write → 403 insufficient_scope; the client re-authorizes with the challenge scope and succeeds', async () => {
    // No refresh tokens: holding one, the SDK would refresh (same scope) instead of authorizing again.
    const client = await connect(calc, { refreshTokens: false });
    expect(await client.callTool('add', { a: 1, b: 1 })).toBe('2');
    expect(client.provider.grantedScope).toBe('mcp:tools');

    expect(await client.callTool('multiply', { x: 6, y: 7 })).toBe('42');

    expect(client.authorizationSteps()).toEqual([
      ...FIRST_AUTHORIZATION,
      'registration',
      ...AUTHORIZE,
      'challenge',
      ...AUTHORIZE,
    ]);
    const stepUp = eventsOf(client.events, 'challenge')[1];
    // scopes_supported joined is "mcp:tools calc:write": the challenge names the same scopes in another order
    // (test/unit/decision/challenge-scopes.test.ts).
    expect(stepUp).toMatchObject({ status: 403, error: 'insufficient_scope', scope: 'calc:write mcp:tools' });
    expect(eventsOf(client.events, 'authorization')[1]?.scope).toBe('calc:write mcp:tools');
    const tokens = eventsOf(client.events, 'token');
    expect(tokens.map((token) => [token.scope, token.refreshToken])).toEqual([
      ['mcp:tools', false],
      ['calc:write mcp:tools', false],
    ]);
    expect(client.provider.grantedScope).toBe('calc:write mcp:tools');
    // The session survives the step-up: one initialize, and the retried call went through it.
    const exchanges = eventsOf(client.events, 'mcp');
    expect(exchanges.filter((event) => event.rpcMethod === 'initialize')).toHaveLength(1);
    expect(exchanges.at(-1)).toMatchObject({ rpcMethod: 'tools/call', status: 200 });
  });

  it('a client holding a refresh token cannot step up on the default route: it refreshes with the old scope', async () => {
    const client = await connect(calc, { refreshTokens: true });
    expect(await client.callTool('add', { a: 1, b: 1 })).toBe('2');
    await expect(client.callTool('multiply', { x: 6, y: 7 })).rejects.toThrow();
    expect(eventsOf(client.events, 'token').some((token) => token.scope?.split(' ').includes('calc:write'))).toBe(false);
  });

  it('policy.upfront_scopes: the same client gets every scope at its first authorization and never needs a step-up', async () => {
    const client = await connect(new URL(`${stack.gatewayUrl}/calc-upfront/mcp`), { refreshTokens: true });
    expect(await client.callTool('multiply', { x: 6, y: 7 })).toBe('42');
    expect(eventsOf(client.events, 'challenge').map((challenge) => [challenge.status, challenge.scope])).toEqual([
      [401, 'calc:write mcp:tools'],
    ]);
    expect(eventsOf(client.events, 'token').map((token) => [token.scope, token.refreshToken])).toEqual([['calc:write mcp:tools', true]]);
  });

  it('H1 no access token obtained through the gateway appears in the gateway or authorization server logs', async () => {
    const client = await connect(calc, { refreshTokens: false });
    expect(await client.callTool('multiply', { x: 2, y: 21 })).toBe('42');
    const text = logs();
    expect(text.length).toBeGreaterThan(0);
    const tokens = clients.flatMap((each) => each.issuedTokens);
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    for (const token of tokens) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(token.split('.')[2]);
    }
  });
});

const runDemoClientCli = (args: readonly string[]) => runScript('examples/demo/client.ts', args);

describe('npm run demo:client', () => {
  it('runs the whole flow headlessly, prints every step and both results, then the user_oauth elicitation, consent and first notes call; never a token', async () => {
    const run = await runDemoClientCli(['--url', calc.href]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    for (const line of [
      '401 from the gateway',
      'protected resource metadata',
      'authorization server metadata',
      'dynamic client registration (RFC 7591): HTTP 201',
      'PKCE S256',
      `resource ${calc.href}`,
      'expires in 300 s',
      'tools/list: add, multiply',
      'add(2, 3) = 5',
      '403 insufficient_scope from the gateway: this operation needs scope "calc:write mcp:tools"',
      'multiply(6, 7) = 42',
      `user_oauth: the notes server behind the gateway → ${stack.gatewayUrl}/notes/mcp`,
      'URL elicitation (MCP error -32042): "Connect Notes (demo, your own account)',
      `open ${stack.gatewayUrl}/consent/connect?link=… (single use`,
      `browser: ${stack.gatewayUrl}/consent/callback → HTTP 200`,
      '"Connected"',
      'add_note = added note 1',
      'list_notes:\n1. hello from the demo client',
    ]) {
      expect(run.stdout).toContain(line);
    }
    expect(run.stdout).not.toMatch(/eyJ[\w-]+\.eyJ/);
  });

  it('exits non-zero with a hint when no gateway answers', async () => {
    const run = await runDemoClientCli(['--url', `http://127.0.0.1:${await freePort()}/calc/mcp`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('demo client failed');
    expect(run.stderr).toContain('npm run demo');
  });
});
