import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProbeCommand } from '../../src/client/probe-command.js';
import { CONFIG_DIR_VARIABLE } from '../../src/client/token-store.js';
import { runCli } from '../helpers/cli.js';
import { runLogin } from '../helpers/login.js';
import { CANARY, startClientFixture, type Fixture } from './client-fixture.js';

/** Every form a secret could leak in: as is, base64 / base64url of it, URL-encoded. */
function leakForms(secret: string): string[] {
  return [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url'), encodeURIComponent(secret)];
}

function expectNoLeak(output: string, secrets: readonly string[]): void {
  for (const secret of secrets) for (const form of leakForms(secret)) expect(output).not.toContain(form);
}

let canaryDeployment: Fixture;

beforeAll(async () => {
  canaryDeployment = await startClientFixture({ issue: 'canary' });
});

afterAll(async () => {
  await canaryDeployment.close();
});

describe('H1: probe and login never print a token, an authorization code or a secret (canaries)', () => {
  it('probe with a canary JWT-shaped token and a canary opaque token: not in the table, the JSON or stderr', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: 'fixture' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ iss: canaryDeployment.issuer, aud: canaryDeployment.resource, exp: 4102444800 })).toString('base64url');
    const jwt = `${header}.${payload}.${CANARY}signature${CANARY}`;
    const opaque = `${CANARY}-opaque-token-value`;
    for (const token of [jwt, opaque]) {
      for (const json of [false, true]) {
        let output = '';
        const write = (text: string) => void (output += text);
        const code = await runProbeCommand([canaryDeployment.url.href, '--token', token, '--timeout', '5s', ...(json ? ['--json'] : [])], { stdout: write, stderr: write });
        expect(code).toBe(1);
        expect(output).toContain('token-accepted');
        expectNoLeak(output, [token, `${CANARY}signature${CANARY}`]);
        expect(output).not.toContain(CANARY);
      }
    }
  });

  it('G1: a token with a line break (a two-line --token-file, or --token) is a usage error that never echoes it, in the table and in --json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-probe-canary-'));
    const file = join(dir, 'token');
    // The trailing newline is trimmed as usual; the one inside the token is what makes it unusable.
    await writeFile(file, `${CANARY}partone\n${CANARY}parttwo\n`, { mode: 0o600 });
    for (const tokenArgs of [['--token-file', file], ['--token', `${CANARY}a\r\n${CANARY}b`]]) {
      for (const json of [false, true]) {
        let output = '';
        const write = (text: string) => void (output += text);
        const code = await runProbeCommand([canaryDeployment.url.href, ...tokenArgs, ...(json ? ['--json'] : [])], { stdout: write, stderr: write });
        expect(output).toContain('not a bearer token: it spans more than one line');
        expect(code).toBe(2);
        expect(output).not.toContain(CANARY);
      }
    }
  });

  it('G1: login refuses an issued access token with a line break (it could not go in a header) without printing it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-login-canary-'));
    const broken = await startClientFixture({ issue: 'canary', plant: 'line-break-token' });
    try {
      const { code, stdout, stderr } = await runLogin([broken.url.href], { [CONFIG_DIR_VARIABLE]: dir });
      expect(stderr).toContain('login failed: the authorization server issued an access token that is not a bearer token: it spans more than one line');
      expect(code).toBe(1);
      expect(`${stdout}${stderr}`).not.toContain(CANARY);
    } finally {
      await broken.close();
    }
  });

  it('login (in process and as the binary): the canary code, client secret and access token flow, and never reach the output', async () => {
    for (const run of [runLogin, (args: readonly string[], env: NodeJS.ProcessEnv) => runCli(['login', ...args, '--no-browser'], { env })]) {
      const dir = await mkdtemp(join(tmpdir(), 'mcp-login-canary-'));
      const { code, stdout, stderr } = await run([canaryDeployment.url.href], { [CONFIG_DIR_VARIABLE]: dir });
      expect(code).toBe(0);
      // The canaries were really handled: the stored access token is one.
      expect(await readFile(join(dir, 'tokens.json'), 'utf8')).toContain(`${CANARY}-access-token-`);
      expect(`${stdout}${stderr}`).not.toContain(CANARY);
    }
  });

  it('login with a canary pre-registered client secret: not in the output', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-login-canary-'));
    const secret = `${CANARY}-pre-registered-secret`;
    await writeFile(join(dir, 'secret'), secret, { mode: 0o600 });
    const { code, stdout, stderr } = await runLogin([canaryDeployment.url.href, '--client-id', 'pre-registered', '--client-secret-file', join(dir, 'secret')], { [CONFIG_DIR_VARIABLE]: dir });
    expect(code).toBe(0);
    expectNoLeak(`${stdout}${stderr}`, [secret]);
    expect(`${stdout}${stderr}`).not.toContain(CANARY);
  });

  it('a login that discards a forged response (another state, a canary code) prints neither code nor the client secret', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-login-canary-'));
    const secret = `${CANARY}-wrong-secret`;
    await writeFile(join(dir, 'secret'), secret, { mode: 0o600 });
    const forging = await startClientFixture({ issue: 'canary', plant: 'wrong-state' });
    try {
      const { code, stdout, stderr } = await runLogin([forging.url.href, '--client-id', 'x', '--client-secret-file', join(dir, 'secret')], { [CONFIG_DIR_VARIABLE]: dir });
      expect(forging.requests).toContain('forged response: 400');
      expect(code).toBe(0);
      expect(`${stdout}${stderr}`).not.toContain(CANARY);
    } finally {
      await forging.close();
    }
  });
});
