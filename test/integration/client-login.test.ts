import { chmod, mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runLoginCommand } from '../../src/client/login-command.js';
import { allTokens, CONFIG_DIR_VARIABLE, readTokenStore } from '../../src/client/token-store.js';
import { runLogin } from '../helpers/login.js';
import { startSilentServer } from '../helpers/net.js';
import { fixturePerTest, type Fixture, type Plant } from './client-fixture.js';

const fixture = fixturePerTest();
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  env = { [CONFIG_DIR_VARIABLE]: await mkdtemp(join(tmpdir(), 'mcp-login-')) };
});

/** The resources with a stored token. */
async function stored(): Promise<string[]> {
  return allTokens(await readTokenStore(join(env[CONFIG_DIR_VARIABLE] ?? '', 'tokens.json'))).map((token) => token.resource);
}

describe('login refuses what a spec client must refuse, before any authorization request', () => {
  it.each<[string, Plant, string]>([
    ['a PRM resource naming another server', 'prm-resource-mismatch', 'protected resource metadata refused: resource'],
    ['an authorization server metadata issuer other than the advertised one', 'as-issuer-mismatch', 'is not http'],
    ['no S256 in code_challenge_methods_supported', 'no-s256', 'lacks S256'],
    ['no code_challenge_methods_supported at all', 'no-pkce-field', 'code_challenge_methods_supported is missing'],
  ])('%s: exit 1, no authorization request, nothing stored', async (_name, plant, message) => {
    const deployment = await fixture(plant);
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain('login failed: ');
    expect(stderr).toContain(message);
    expect(code).toBe(1);
    expect(deployment.requests.filter((request) => request.startsWith('GET /as/authorize') || request.startsWith('POST /as/'))).toEqual([]);
    expect(await stored()).toEqual([]);
  });
});

describe('login: the authorization response', () => {
  it('G8: a forged response with another state is discarded (an error page) and the real one still signs in', async () => {
    const deployment = await fixture('wrong-state');
    const { code } = await runLogin([deployment.url.href], env);
    expect(deployment.requests).toContain('forged response: 400');
    expect(code).toBe(0);
    // The fixture's token endpoint knows only the real code: a token proves the forged one was not exchanged.
    expect(deployment.requests.filter((request) => request === 'POST /as/token')).toHaveLength(1);
    expect(await stored()).toEqual([deployment.resource]);
  });

  it.each<[string, Plant, string]>([
    ['an iss that is the issuer with a trailing slash', 'iss-trailing-slash', 'unexpected "iss" (issuer) response parameter value'],
    ['no iss although the metadata advertises authorization_response_iss_parameter_supported', 'iss-missing', 'response parameter "iss" (issuer) missing'],
  ])('RFC 9207: %s: the code is never exchanged, exit 1, nothing stored', async (_name, plant, message) => {
    const deployment = await fixture(plant);
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain(`login failed: the authorization response was refused: ${message}`);
    expect(code).toBe(1);
    expect(deployment.requests).toContain('GET /as/authorize');
    expect(deployment.requests).not.toContain('POST /as/token');
    expect(await stored()).toEqual([]);
  });

  it('an error response names its error code: exit 1', async () => {
    const deployment = await fixture('access-denied');
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain('login failed: the authorization server refused: access_denied');
    expect(code).toBe(1);
  });

  it('sends PKCE S256, state and the resource, registers dynamically, and keeps the token by resource', async () => {
    const deployment = await fixture('clean');
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(code).toBe(0);
    expect(stderr).toContain(`client: dynamic client registration at ${deployment.issuer}/register`);
    // The fixture's token endpoint refuses a wrong code_verifier or resource, so a token proves both were right.
    expect(deployment.requests).toEqual(expect.arrayContaining(['POST /as/register', 'GET /as/authorize', 'POST /as/token']));
    expect(await stored()).toEqual([deployment.resource]);
  });

  it('G5: a PRM resource that is a same-origin prefix (probe fails it) is accepted as the official SDK does, with a note', async () => {
    const deployment = await fixture('prm-resource-prefix');
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain(`resource ${deployment.url.origin} is only a prefix of ${deployment.resource} (RFC 9728 §3.3 requires them identical): accepted`);
    expect(code).toBe(0);
    // The fixture's token endpoint checked that the resource sent was the metadata's.
    expect(await stored()).toEqual([deployment.url.origin]);
  });

  it('G7: an existing config directory open to others is tightened to 0700 and login says so; the token file is 0600', async () => {
    const deployment = await fixture('clean');
    const dir = env[CONFIG_DIR_VARIABLE] ?? '';
    await chmod(dir, 0o755);
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(code).toBe(0);
    expect(stderr).toContain(`fixed: ${dir} was mode 0755, open to others: now 0700`);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'tokens.json'))).mode & 0o777).toBe(0o600);
  });

  it.each<[string, Plant]>([
    ['discovery only at the root', 'root-only-discovery'],
    ['error="invalid_token" in the first challenge', 'error-without-token'],
  ])('works despite %s (a warning for probe, not a refusal)', async (_name, plant) => {
    const deployment = await fixture(plant);
    const { code } = await runLogin([deployment.url.href], env);
    expect(code).toBe(0);
    expect(await stored()).toEqual([deployment.resource]);
  });
});

describe('login: step-up on 403 insufficient_scope, with a limit per operation', () => {
  const authorizations = (deployment: Fixture) => deployment.requests.filter((request) => request === 'GET /as/authorize').length;

  it('a 403 naming a scope already requested is final at once: one step-up, no loop', async () => {
    const deployment = await fixture('insufficient-scope');
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain('tools/list: 403 insufficient_scope, stepping up to scope "mcp:tools mcp:admin"');
    expect(stderr).toContain('login failed: tools/list: 403 insufficient_scope for "mcp:admin", which was already requested');
    expect(code).toBe(1);
    expect(authorizations(deployment)).toBe(2);
  });

  it('a server naming a new scope on every 403 gets at most three authorizations for the operation', async () => {
    const deployment = await fixture('escalating-scope');
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain('login failed: tools/list: still refused (403) after 3 authorizations; giving up');
    expect(code).toBe(1);
    // One for initialize's 401, three for tools/list.
    expect(authorizations(deployment)).toBe(4);
  });
});

describe('login usage and reachability (exit 2)', () => {
  it.each([
    ['no URL', [], 'the MCP server URL is missing'],
    ['an unknown option', ['http://127.0.0.1:1/mcp', '--frobnicate'], "Unknown option '--frobnicate'"],
    ['--client-secret-file without --client-id', ['http://127.0.0.1:1/mcp', '--client-secret-file', '/x'], '--client-secret-file needs --client-id'],
    ['an http --client-metadata-url', ['http://127.0.0.1:1/mcp', '--client-metadata-url', 'http://example.com/client.json'], 'https URL with a path'],
    ['--tool-arguments that are not JSON', ['http://127.0.0.1:1/mcp', '--call-tool', 'add', '--tool-arguments', '{a'], 'is not JSON'],
    ['--tool-arguments that are not an object', ['http://127.0.0.1:1/mcp', '--call-tool', 'add', '--tool-arguments', '[1]'], 'must be a JSON object'],
    ['--tool-arguments without --call-tool', ['http://127.0.0.1:1/mcp', '--tool-arguments', '{}'], 'needs --call-tool'],
  ])('%s', async (_name, args, message) => {
    const { code, stderr } = await runLogin(args, env);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain('Usage: mcp-auth-gateway login');
  });

  it('an unreachable URL exits 2', async () => {
    const deployment = await fixture('clean');
    await deployment.close();
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain(`login failed: cannot reach ${deployment.url.href}`);
    expect(code).toBe(2);
  });

  it('G2: a server that accepts the connection and never answers: --timeout bounds the MCP request, exit 2, "timed out"', async () => {
    const silent = await startSilentServer();
    try {
      let stderr = '';
      const url = `http://127.0.0.1:${new URL(silent.url).port}/mcp`;
      const code = await runLoginCommand([url, '--no-browser', '--timeout', '200ms'], { stdout: () => undefined, stderr: (text) => (stderr += text) }, env);
      expect(stderr).toContain(`login failed: cannot reach ${url}: `);
      expect(stderr).toContain('timed out after 0.2 s');
      expect(code).toBe(2);
    } finally {
      await silent.close();
    }
  });

  it('a pre-registered client: --client-id and the secret from --client-secret-file', async () => {
    const deployment = await fixture('clean');
    const secretFile = join(env[CONFIG_DIR_VARIABLE] ?? '', 'secret');
    await writeFile(secretFile, 'pre-registered-secret\n', { mode: 0o600 });
    const { code, stderr } = await runLogin([deployment.url.href, '--client-id', 'pre-registered', '--client-secret-file', secretFile], env);
    expect(stderr).toContain('client: the pre-registered client_id pre-registered');
    expect(code).toBe(0);
    expect(deployment.requests).not.toContain('POST /as/register');
  });
});
