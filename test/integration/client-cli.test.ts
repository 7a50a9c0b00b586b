import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_DIR_VARIABLE } from '../../src/client/token-store.js';
import { runCli } from '../helpers/cli.js';
import { startClientFixture, type Fixture } from './client-fixture.js';

let deployment: Fixture;
let misconfigured: Fixture;

beforeAll(async () => {
  [deployment, misconfigured] = await Promise.all([startClientFixture(), startClientFixture({ plant: 'no-s256' })]);
});

afterAll(async () => {
  await Promise.all([deployment.close(), misconfigured.close()]);
});

describe('the mcp-auth-gateway binary: probe and login', () => {
  it('--help documents probe and login', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('mcp-auth-gateway probe URL [--token T | --token-file F]');
    expect(stdout).toContain('mcp-auth-gateway login URL [--scope S]');
  });

  it('probe exits 0 for a clean deployment, 1 for a misconfigured one, 2 for a usage error', async () => {
    const clean = await runCli(['probe', deployment.url.href, '--timeout', '5s']);
    expect(clean.stdout).toContain('PASS  as-pkce');
    expect(clean.code).toBe(0);
    const broken = await runCli(['probe', misconfigured.url.href]);
    expect(broken.stdout).toMatch(/^FAIL {2}as-pkce .*lacks S256/m);
    expect(broken.code).toBe(1);
    const usage = await runCli(['probe', deployment.url.href, '--frobnicate']);
    expect(usage.stderr).toContain("Unknown option '--frobnicate'");
    expect(usage.stderr).toContain('Usage: mcp-auth-gateway probe');
    expect(usage.code).toBe(2);
  });

  it('login signs in through the printed address, keeps the token 0600 and prints it only with --print-token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-login-cli-'));
    const { code, stdout, stderr } = await runCli(['login', deployment.url.href, '--no-browser', '--print-token'], { env: { [CONFIG_DIR_VARIABLE]: dir } });
    expect(stderr).toContain('Sign in at: ');
    expect(code).toBe(0);
    const file = join(dir, 'tokens.json');
    const { authorizationServers } = JSON.parse(await readFile(file, 'utf8')) as { authorizationServers: Record<string, Record<string, { accessToken: string }>> };
    expect(stdout).toBe(`${authorizationServers[deployment.issuer]?.[deployment.resource]?.accessToken}\n`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});
