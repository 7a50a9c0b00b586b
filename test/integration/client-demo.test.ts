import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoStackOnFreePorts, type DemoStack } from '../../examples/demo/stack.js';
import type { Check, CheckStatus } from '../../src/client/check.js';
import { loginClientMetadata } from '../../src/client/client-identity.js';
import { runProbeCommand } from '../../src/client/probe-command.js';
import { allTokens, CONFIG_DIR_VARIABLE, readTokenStore, saveToken, type StoredToken } from '../../src/client/token-store.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { runLogin } from '../helpers/login.js';
import { startSdkExampleServer, type SdkExampleServer } from './client-sdk-example.js';

let stack: DemoStack;
let sdkExample: SdkExampleServer;
let configDir: string;

beforeAll(async () => {
  stack = await startDemoStackOnFreePorts({ logger: captureLogs().logger });
  sdkExample = await startSdkExampleServer();
});

afterAll(async () => {
  await Promise.all([stack.close(), sdkExample.close()]);
});

async function probeJson(url: string, token?: string): Promise<{ code: number; checks: Check[]; statuses: Record<string, CheckStatus> }> {
  let stdout = '';
  const code = await runProbeCommand([url, '--json', '--timeout', '5s', ...(token === undefined ? [] : [`--token=${token}`])], { stdout: (text) => (stdout += text), stderr: () => undefined });
  const { checks } = JSON.parse(stdout) as { checks: Check[] };
  return { code, checks, statuses: Object.fromEntries(checks.map((check) => [check.id, check.status])) };
}

async function storedToken(resource: string): Promise<StoredToken> {
  const token = allTokens(await readTokenStore(join(configDir, 'tokens.json'))).find((stored) => stored.resource === resource);
  if (token === undefined) throw new Error(`no token stored for ${resource}`);
  return token;
}

describe('probe and login against the demo (dev authorization server, calculator, gateway)', () => {
  beforeAll(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'mcp-login-demo-'));
  });

  it.each(['/calc/mcp', '/calc-opaque/mcp'])('probe %s: every check passes, exit 0', async (path) => {
    const { code, checks } = await probeJson(`${stack.gatewayUrl}${path}`);
    expect(checks.filter((check) => check.status !== 'pass')).toEqual([]);
    expect(checks.find((check) => check.id === 'registration')?.message).toContain('Client ID Metadata Document');
    expect(code).toBe(0);
  });

  it('probe prints one line per check with its clause, and the totals', async () => {
    let stdout = '';
    const code = await runProbeCommand([`${stack.gatewayUrl}/calc/mcp`], { stdout: (text) => (stdout += text), stderr: () => undefined });
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`probe ${stack.gatewayUrl}/calc/mcp`);
    expect(lines).toContainEqual(expect.stringMatching(/^PASS {2}as-pkce {16}code_challenge_methods_supported: S256 {2}\[MCP authorization: PKCE/));
    expect(lines.at(-1)).toBe('14 passed, 0 warning(s), 0 failed');
  });

  it('login: 401 → discovery → loopback Client ID Metadata Document → PKCE + resource → token; step-up to calc:write for multiply', async () => {
    const resource = `${stack.gatewayUrl}/calc/mcp`;
    const { code, stdout, stderr } = await runLogin([resource, '--call-tool', 'multiply', '--tool-arguments', '{"x":6,"y":7}'], { [CONFIG_DIR_VARIABLE]: configDir });
    expect(stderr).toContain('initialize: 401, authorization needed');
    expect(stderr).toContain('client: a Client ID Metadata Document (client_id_metadata_document_supported) served on loopback');
    expect(stderr).toContain('tools/call multiply: 403 insufficient_scope, stepping up to scope "mcp:tools calc:write"');
    expect(stderr).toContain('tools/call multiply: ok');
    expect(code).toBe(0);
    expect(stdout).toBe('');

    const token = await storedToken(resource);
    expect(token).toMatchObject({ resource, authorizationServer: stack.authServer.issuer, tokenType: 'Bearer', scope: 'mcp:tools calc:write' });
    expect(decodeJwt(token.accessToken)).toMatchObject({ aud: resource, iss: stack.authServer.issuer, scope: 'mcp:tools calc:write' });
  });

  it("login's registration (application_type native, a loopback redirect URI) is accepted by an OpenID provider", async () => {
    const response = await fetch(`${stack.authServer.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(loginClientMetadata('http://127.0.0.1:45678/callback')),
    });
    expect(response.status).toBe(201);
    // The development server then treats every client as `web`, so loopback redirect URIs match exactly.
    expect(await response.json()).toMatchObject({ redirect_uris: ['http://127.0.0.1:45678/callback'] });
  });

  it('login again: the stored token is used; expired, it is refreshed at the OpenID provider, which then refuses the rotated-out refresh token', async () => {
    const resource = `${stack.gatewayUrl}/calc/mcp`;
    const reused = await runLogin([resource], { [CONFIG_DIR_VARIABLE]: configDir });
    expect(reused.code).toBe(0);
    expect(reused.stderr).toContain(`using the stored token for ${resource}`);
    expect(reused.stderr).not.toContain('Sign in at:');

    const before = await storedToken(resource);
    expect(before.refreshToken).toBeDefined();
    await saveToken(join(configDir, 'tokens.json'), { ...before, expiresAt: new Date(0).toISOString() });
    const refreshed = await runLogin([resource], { [CONFIG_DIR_VARIABLE]: configDir });
    expect(refreshed.stderr).toContain('refreshed: scope "mcp:tools calc:write"');
    expect(refreshed.stderr).not.toContain('Sign in at:');
    expect(refreshed.code).toBe(0);
    const after = await storedToken(resource);
    expect(after.refreshToken).not.toBe(before.refreshToken);

    const replay = await fetch(`${stack.authServer.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: before.refreshToken ?? '', client_id: before.clientId, resource }),
    });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it("login on the user_oauth route before the user connected the vendor: the gateway's consent link is printed, exit 1", async () => {
    const resource = `${stack.gatewayUrl}/notes/mcp`;
    const { code, stderr } = await runLogin([resource], { [CONFIG_DIR_VARIABLE]: await mkdtemp(join(tmpdir(), 'mcp-login-notes-')) });
    const link = /^Open this link in your browser, then run login again: (\S+)$/m.exec(stderr)?.[1];
    expect(link).toBeDefined();
    expect(new URL(link ?? '').origin).toBe(new URL(stack.gatewayUrl).origin);
    expect(stderr).toContain('initialize: the server needs you to grant access first');
    expect(code).toBe(1);
  });

  it('the token store is readable by the user only: file 0600, directory 0700', async () => {
    expect((await stat(join(configDir, 'tokens.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
  });

  it('login --print-token prints only the access token on stdout; tokens of other resources stay', async () => {
    const resource = `${stack.gatewayUrl}/calc-opaque/mcp`;
    const { code, stdout } = await runLogin([resource, '--print-token'], { [CONFIG_DIR_VARIABLE]: configDir });
    expect(code).toBe(0);
    const token = await storedToken(resource);
    expect(stdout).toBe(`${token.accessToken}\n`);
    expect(token.scope).toBe('mcp:tools');
    expect(allTokens(await readTokenStore(join(configDir, 'tokens.json'))).map((stored) => stored.resource).sort()).toEqual([`${stack.gatewayUrl}/calc/mcp`, resource].sort());
  });

  it('probe with the token login obtained: claims, signature and the server all agree', async () => {
    const resource = `${stack.gatewayUrl}/calc/mcp`;
    const { code, checks } = await probeJson(resource, (await storedToken(resource)).accessToken);
    expect(checks.filter((check) => check.status !== 'pass')).toEqual([]);
    expect(checks.map((check) => check.id)).toEqual(expect.arrayContaining(['token-issuer', 'token-audience', 'token-lifetime', 'token-signature', 'token-accepted']));
    expect(code).toBe(0);
  });

  it("probe with the opaque route's token: introspection needed (warn), accepted", async () => {
    const resource = `${stack.gatewayUrl}/calc-opaque/mcp`;
    const { code, statuses } = await probeJson(resource, (await storedToken(resource)).accessToken);
    expect(statuses).toMatchObject({ 'token-format': 'warn', 'token-accepted': 'pass' });
    expect(code).toBe(0);
  });

  it("probe with the opaque route's token on the JWT route: the gateway answers 401 invalid_token, exit 1", async () => {
    const { code, statuses, checks } = await probeJson(`${stack.gatewayUrl}/calc/mcp`, (await storedToken(`${stack.gatewayUrl}/calc-opaque/mcp`)).accessToken);
    expect(statuses).toMatchObject({ 'token-format': 'warn', 'token-accepted': 'fail' });
    expect(checks.find((check) => check.id === 'token-accepted')?.message).toBe('POST initialize with the token: 401 (error="invalid_token")');
    expect(code).toBe(1);
  });
});

describe("probe and login against the official SDK's OAuth example (a server this project did not write)", () => {
  it('probe finds its known slip: error="invalid_token" in the challenge to a request without a token, and no scope', async () => {
    const { code, statuses, checks } = await probeJson(sdkExample.url.href);
    expect(statuses).toMatchObject({
      'unauthenticated-post': 'pass',
      'unauthenticated-get': 'pass',
      challenge: 'pass',
      'challenge-scope': 'warn',
      'challenge-error': 'fail',
      'resource-metadata': 'pass',
      resource: 'pass',
      'as-metadata': 'pass',
      'as-issuer': 'pass',
      'as-pkce': 'pass',
      registration: 'pass',
    });
    expect(checks.find((check) => check.id === 'registration')?.message).toContain(`dynamic client registration at ${sdkExample.authorizationServer.origin}/register`);
    expect(checks.find((check) => check.id === 'scope-selection')?.message).toContain('"mcp:tools" (from scopes_supported)');
    expect(code).toBe(1);
  });

  it('login registers dynamically and gets an opaque token for the resource; probe sends it and it is accepted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-login-sdk-'));
    const { code, stderr } = await runLogin([sdkExample.url.href], { [CONFIG_DIR_VARIABLE]: dir });
    expect(stderr).toContain(`client: dynamic client registration at ${sdkExample.authorizationServer.origin}/register`);
    expect(code).toBe(0);
    const stored = JSON.parse(await readFile(join(dir, 'tokens.json'), 'utf8')) as { authorizationServers: Record<string, Record<string, StoredToken>> };
    const token = stored.authorizationServers[sdkExample.authorizationServer.href]?.[sdkExample.url.href];
    expect(token?.scope).toBe('mcp:tools');
    const probed = await probeJson(sdkExample.url.href, token?.accessToken);
    expect(probed.statuses).toMatchObject({ 'token-format': 'warn', 'token-accepted': 'pass' });
  });
});
