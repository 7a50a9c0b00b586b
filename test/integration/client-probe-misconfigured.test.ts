import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Check, CheckStatus } from '../../src/client/check.js';
import { runProbeCommand } from '../../src/client/probe-command.js';
import { startSilentServer } from '../helpers/net.js';
import { fixturePerTest, type Fixture, type Plant, type TokenClaims } from './client-fixture.js';

const fixture = fixturePerTest();

/** `probe --json` against `url` (with `--token` or other arguments): the exit code and each check's status by id. */
async function probeJson(url: URL, token?: string | readonly string[]): Promise<{ code: number; statuses: Record<string, CheckStatus>; checks: Check[] }> {
  let stdout = '';
  const tokenArgs = token === undefined ? [] : typeof token === 'string' ? [`--token=${token}`] : token;
  const code = await runProbeCommand([url.href, '--json', '--timeout', '5s', ...tokenArgs], { stdout: (text) => (stdout += text), stderr: () => undefined });
  const { checks } = JSON.parse(stdout) as { checks: Check[] };
  return { code, checks, statuses: Object.fromEntries(checks.map((check) => [check.id, check.status])) };
}

describe('probe against planted misconfigurations (a fixture deployment, one mistake each)', () => {
  it('a clean deployment passes every check and exits 0', async () => {
    const { url } = await fixture('clean');
    const { code, checks } = await probeJson(url);
    expect(checks.filter((check) => check.status !== 'pass')).toEqual([]);
    expect(checks.map((check) => check.id)).toEqual([
      'unauthenticated-post',
      'unauthenticated-get',
      'challenge',
      'challenge-scope',
      'resource-metadata',
      'resource',
      'authorization-servers',
      'scopes-supported',
      'as-metadata',
      'as-issuer',
      'as-pkce',
      'as-https',
      'registration',
      'scope-selection',
    ]);
    expect(code).toBe(0);
  });

  it.each<[string, Plant, Record<string, CheckStatus>, number]>([
    ['PRM resource mismatch', 'prm-resource-mismatch', { resource: 'fail' }, 1],
    ['G5: PRM resource a same-origin prefix (the origin)', 'prm-resource-prefix', { resource: 'fail' }, 1],
    ['AS issuer mismatch (rewritten issuer)', 'as-issuer-mismatch', { 'as-issuer': 'fail', registration: 'fail' }, 1],
    ['no S256 in code_challenge_methods_supported', 'no-s256', { 'as-pkce': 'fail' }, 1],
    ['no code_challenge_methods_supported at all', 'no-pkce-field', { 'as-pkce': 'fail' }, 1],
    ['discovery only at the root, no resource_metadata in the challenge', 'root-only-discovery', { challenge: 'warn', 'resource-metadata': 'warn', resource: 'pass' }, 0],
    ['error="invalid_token" in a challenge to a request without a token', 'error-without-token', { 'challenge-error': 'fail' }, 1],
    ['a relative resource_metadata in the challenge (path shape A still answers)', 'relative-resource-metadata', { challenge: 'fail', 'resource-metadata': 'warn' }, 1],
  ])('%s', async (_name, plant, expected, exitCode) => {
    const { url } = await fixture(plant);
    const { code, statuses, checks } = await probeJson(url);
    expect(statuses).toMatchObject(expected);
    const others = checks.filter((check) => !(check.id in expected) && check.id !== 'registration');
    expect(others.filter((check) => check.status !== 'pass')).toEqual([]);
    expect(code).toBe(exitCode);
  });

  it('names what it found in the messages (the rewritten issuer, the wrong resource)', async () => {
    const issuer = await probeJson((await fixture('as-issuer-mismatch')).url);
    expect(issuer.checks.find((check) => check.id === 'as-issuer')?.message).toContain('https://idp.example.com/realms/mcp');
    const mismatch = await fixture('prm-resource-mismatch');
    const resource = await probeJson(mismatch.url);
    expect(resource.checks.find((check) => check.id === 'resource')?.message).toContain(`${mismatch.url.origin}/other/mcp`);
  });
});

describe('probe with a token: its claims and signature against what discovery found, then the server answer', () => {
  it('a token as the authorization server issues it passes every check and is accepted', async () => {
    const deployment = await fixture('clean');
    const { code, checks, statuses } = await probeJson(deployment.url, await deployment.token());
    expect(checks.filter((check) => check.status !== 'pass')).toEqual([]);
    expect(statuses).toMatchObject({
      'token-format': 'pass',
      'token-issuer': 'pass',
      'token-audience': 'pass',
      'token-lifetime': 'pass',
      'token-signature': 'pass',
      'token-accepted': 'pass',
    });
    expect(code).toBe(0);
  });

  it('the token from --token-file (with the newline an editor adds): accepted, exit 0', async () => {
    const deployment = await fixture('clean');
    const file = join(await mkdtemp(join(tmpdir(), 'mcp-probe-token-')), 'token');
    await writeFile(file, `${await deployment.token()}\n`, { mode: 0o600 });
    const { code, statuses } = await probeJson(deployment.url, ['--token-file', file]);
    expect(statuses).toMatchObject({ 'token-format': 'pass', 'token-audience': 'pass', 'token-signature': 'pass', 'token-accepted': 'pass' });
    expect(code).toBe(0);
  });

  it('a 403 insufficient_scope to initialize with the token: token-accepted fails naming the scope the server wants, exit 1', async () => {
    const deployment = await fixture('insufficient-scope-initialize');
    const { code, checks } = await probeJson(deployment.url, await deployment.token());
    expect(checks.find((check) => check.id === 'token-accepted')).toMatchObject({
      status: 'fail',
      message: 'POST initialize with the token: 403 insufficient_scope, the server wants scope "mcp:admin"',
    });
    expect(code).toBe(1);
  });

  const tokenRequests = (deployment: Fixture) => deployment.requests.filter((request) => request === 'POST /mcp').length - 1;

  it.each<[string, (fixture: Fixture) => TokenClaims, string]>([
    ['expired', () => ({ expiresIn: -60 }), 'token-lifetime'],
    ['bad signature (a key not in the JWKS)', () => ({ signedBy: 'stranger' }), 'token-signature'],
  ])('%s: that check fails, the server refuses it (401), exit 1', async (_name, claims, failing) => {
    const deployment = await fixture('clean');
    const { code, checks, statuses } = await probeJson(deployment.url, await deployment.token(claims(deployment)));
    expect(checks.filter((check) => check.id.startsWith('token-') && check.status === 'fail').map((check) => check.id).sort()).toEqual(
      [failing, 'token-accepted'].sort(),
    );
    expect(statuses[failing]).toBe('fail');
    expect(checks.find((check) => check.id === 'token-accepted')?.message).toContain('401');
    expect(tokenRequests(deployment)).toBe(1);
    expect(code).toBe(1);
  });

  it.each<[string, Plant, (fixture: Fixture) => TokenClaims, string]>([
    ['a wrong audience', 'clean', () => ({ aud: 'https://other.example.com/mcp' }), 'token-audience'],
    ['a foreign issuer', 'clean', () => ({ iss: 'https://idp.example.com/realms/other' }), 'token-issuer'],
    ['a PRM resource naming another server', 'prm-resource-mismatch', () => ({}), 'resource'],
  ])('G9: %s: the token is not sent (this server may not be the one it is for), token-accepted says why, exit 1', async (_name, plant, claims, failing) => {
    const deployment = await fixture(plant);
    const { code, checks, statuses } = await probeJson(deployment.url, await deployment.token(claims(deployment)));
    expect(statuses[failing]).toBe('fail');
    const accepted = checks.find((check) => check.id === 'token-accepted');
    expect(accepted?.status).toBe('warn');
    expect(accepted?.message).toMatch(new RegExp(`^not sent: (.+, )?${failing}( |,)`));
    expect(tokenRequests(deployment)).toBe(0);
    expect(code).toBe(1);
  });

  it('a redirect answering the request that carries the token is not followed: token-accepted fails naming where it pointed', async () => {
    const deployment = await fixture('token-redirect');
    const { code, checks } = await probeJson(deployment.url, await deployment.token());
    const accepted = checks.find((check) => check.id === 'token-accepted');
    expect(accepted?.status).toBe('fail');
    // The query is dropped from the target: it may carry something of the request.
    expect(accepted?.message).toBe(
      `POST initialize with the token: 307, a redirect to ${deployment.url.origin}/moved/mcp (not followed: probe reports the answers of the URL it was given; probe that URL if it is the MCP endpoint)`,
    );
    expect(deployment.requests.filter((request) => request.endsWith('/moved/mcp'))).toEqual([]);
    expect(code).toBe(1);
  });

  it('an MCP endpoint that redirects every request: reported as its own answer, the target never asked', async () => {
    const deployment = await fixture('moved-endpoint');
    const { checks } = await probeJson(deployment.url);
    expect(checks.find((check) => check.id === 'unauthenticated-post')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining(`POST initialize without a token: 308, a redirect to ${deployment.url.origin}/moved/mcp (not followed`) as unknown,
    });
    expect(deployment.requests.filter((request) => request.endsWith('/moved/mcp'))).toEqual([]);
  });

  it('an opaque token: only introspection could check it (warn), then it is sent', async () => {
    const deployment = await fixture('clean');
    const { statuses, code } = await probeJson(deployment.url, 'opaque-token-value');
    expect(statuses).toMatchObject({ 'token-format': 'warn', 'token-accepted': 'fail' });
    expect(code).toBe(1);
  });
});

describe('probe usage and reachability (exit 2)', () => {
  it.each([
    ['no URL', [], 'the MCP server URL is missing'],
    ['a URL that is not one', ['not a url'], 'is not an absolute URL'],
    ['a non-http URL', ['ftp://example.com/mcp'], 'http or https'],
    ['an unknown option', ['http://127.0.0.1:1/mcp', '--frobnicate'], "Unknown option '--frobnicate'"],
    ['an option without its value', ['http://127.0.0.1:1/mcp', '--token'], "Option '--token <value>' argument missing"],
    ['both --token and --token-file', ['http://127.0.0.1:1/mcp', '--token', 't', '--token-file', '/nonexistent'], 'not both'],
    ['an unreadable --token-file', ['http://127.0.0.1:1/mcp', '--token-file', '/nonexistent/token'], 'cannot read --token-file'],
    ['a bad --timeout', ['http://127.0.0.1:1/mcp', '--timeout', 'soon'], '--timeout soon is not a duration'],
  ])('%s', async (_name, args, message) => {
    let stderr = '';
    const code = await runProbeCommand(args, { stdout: () => undefined, stderr: (text) => (stderr += text) });
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain('Usage: mcp-auth-gateway probe');
  });

  it('an unreachable URL exits 2 naming the cause', async () => {
    const deployment = await fixture('clean');
    const url = deployment.url;
    await deployment.close();
    let stderr = '';
    const code = await runProbeCommand([url.href], { stdout: () => undefined, stderr: (text) => (stderr += text) });
    expect(code).toBe(2);
    expect(stderr).toMatch(/cannot reach .*ECONNREFUSED/);
  });

  it('--timeout expires: a server that accepts the connection and never answers exits 2, "timed out"', async () => {
    const silent = await startSilentServer();
    try {
      let stderr = '';
      const url = `http://127.0.0.1:${new URL(silent.url).port}/mcp`;
      const code = await runProbeCommand([url, '--timeout', '200ms'], { stdout: () => undefined, stderr: (text) => (stderr += text) });
      expect(stderr).toBe(`cannot reach ${url}: timed out after 0.2 s\n`);
      expect(code).toBe(2);
    } finally {
      await silent.close();
    }
  });
});
