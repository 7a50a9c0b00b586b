import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** Runs the real CLI entry point (TypeScript source through tsx, so no build is needed). */
async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const EXAMPLE_ENV = {
  REDIS_URL: 'redis://127.0.0.1:6379',
  CACHE_KEY_SECRET: 'k'.repeat(40),
  CALC_UPSTREAM_TOKEN: 'calc-token',
  NOTES_API_KEY: 'notes-key',
  INTROSPECTION_SECRET: 'introspection-secret',
};

describe('mcp-auth-gateway CLI', () => {
  it('--help explains serve and check-config', async () => {
    const { code, stdout } = await cli(['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('serve');
    expect(stdout).toContain('check-config');
  });

  it('check-config exits 0 for the shipped example', async () => {
    const { code, stdout } = await cli(['check-config', 'config/example.yaml'], EXAMPLE_ENV);
    expect(code).toBe(0);
    expect(stdout).toContain('OK');
  });

  it('check-config exits 1 listing every problem with its YAML path, never a secret value', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcpgw-cli-'));
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      `public_url: https://gw.example.com
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: http://127.0.0.1:3000/mcp, auth: { type: bearer, token: "\${env:MISSING_TOKEN}" } }
    authorization_servers: [http://auth.example.com]
    tokens:
      jwt: { issuer: not-a-url }
    unknown_key: 1
`,
    );
    const { code, stderr } = await cli(['check-config', file]);
    expect(code).toBe(1);
    expect(stderr).toContain('routes.0.tokens.jwt.issuer');
    expect(stderr).toContain('routes.0.unknown_key');
    expect(stderr).toContain('MISSING_TOKEN');
  });

  it('check-config for routes that keep their own authorization server: audience lists, opt-ins, challenge scopes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcpgw-cli-'));
    const route = (name: string, tokens: string) => `
  - name: ${name}
    path: /${name}/mcp
    upstream: { url: http://127.0.0.1:3000/mcp }
    authorization_servers: [https://login.example.com]
    tokens: ${tokens}
    policy: { scopes: [mcp:tools], challenge_scopes: [openid] }`;
    const good = join(dir, 'external-as.yaml');
    const jwt = '{ jwt: { issuer: "https://login.example.com", audience: [api://calc, urn:example:calc] } }';
    await writeFile(good, `public_url: https://gw.example.com\nroutes:${route('calc', jwt)}${route('calc-upfront', jwt)}\n`);
    const valid = await cli(['check-config', good]);
    expect(valid.code).toBe(0);
    expect(valid.stderr).toContain('warning: routes.1.tokens.jwt.audience: "api://calc" is also accepted by routes.0 from the same issuer');

    const bad = join(dir, 'external-as-bad.yaml');
    const introspection = '{ introspection: { endpoint: "https://login.example.com/introspect", client_id: gw, private_key: "${env:KEY}", accept_missing_iss: true } }';
    await writeFile(bad, `public_url: https://gw.example.com\nroutes:${route('calc', '{ jwt: { issuer: "https://login.example.com", audience: [] } }')}${route('files', introspection)}\n`);
    const invalid = await cli(['check-config', bad], { KEY: 'not a key' });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('routes.0.tokens.jwt.audience');
    expect(invalid.stderr).toContain('routes.1.tokens.introspection.private_key: must be a private key');
    expect(invalid.stderr).not.toContain('not a key');
  });

  it('check-config shows the warnings together with the problems: one pass, not fix-then-rerun', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcpgw-cli-'));
    const file = join(dir, 'semantic.yaml');
    await writeFile(
      file,
      `public_url: https://gw.example.com
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: http://127.0.0.1:3000/mcp, auth: { type: bearer, token: "written-in-the-file" } }
    authorization_servers: [http://auth.example.com]
    tokens:
      jwt: { issuer: http://auth.example.com }
`,
    );
    const { code, stderr } = await cli(['check-config', file]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/problem\(s\), \d+ warning\(s\)/);
    expect(stderr).toContain('routes.0.authorization_servers');
    expect(stderr).toMatch(/^warning: .*routes\.0\.upstream\.auth\.token/m);
    expect(stderr).not.toContain('written-in-the-file');
  });

  it('unknown commands exit 2 with the help text', async () => {
    const { code, stderr } = await cli(['frobnicate']);
    expect(code).toBe(2);
    expect(stderr).toContain('Usage');
  });
});
