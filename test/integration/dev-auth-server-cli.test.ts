import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';

/** `mcp-auth-gateway dev-auth-server` as users run it: the real CLI in a child process, its default key file. */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dev-auth-server-cli-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Starts the CLI for `issuer` with `XDG_CACHE_HOME` in the test's directory; its JWKS key ids once it listens; stops it. */
async function signingKeyIdsOf(config: string, issuer: string): Promise<string[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'dev-auth-server', '--config', config, '--issuer', issuer, '--auto-approve'], {
    env: { ...process.env, XDG_CACHE_HOME: join(dir, 'cache'), NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise((resolve) => child.once('close', resolve));
  try {
    let listening = false;
    for await (const line of createInterface({ input: child.stdout })) {
      listening = line.includes('development authorization server listening');
      if (listening) break;
    }
    if (!listening) throw new Error(`dev-auth-server did not start: ${stderr}`);
    const jwks = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: { kid: string }[] };
    return jwks.keys.map((key) => key.kid);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('dev-auth-server CLI', () => {
  it('two servers without --keys-file (the gateway\'s and a vendor\'s) sign with different keys, each kept in its own file across restarts', { timeout: 60_000 }, async () => {
    const [gatewayAs, vendorAs] = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`];
    const config = join(dir, 'config.yaml');
    await writeFile(
      config,
      `public_url: https://gw.example.test
routes:
${[gatewayAs, vendorAs]
  .map(
    (issuer, index) => `  - name: r${index}
    path: /r${index}/mcp
    upstream: { url: "http://127.0.0.1:3001/mcp" }
    authorization_servers: [${issuer}]
    tokens: { jwt: { issuer: ${issuer} } }
`,
  )
  .join('')}`,
    );
    const [gatewayKeys, vendorKeys] = await Promise.all([signingKeyIdsOf(config, gatewayAs), signingKeyIdsOf(config, vendorAs)]);
    expect(gatewayKeys).toHaveLength(1);
    expect(vendorKeys).toHaveLength(1);
    expect(vendorKeys).not.toEqual(gatewayKeys);
    expect((await readdir(join(dir, 'cache', 'mcp-auth-gateway'))).sort()).toEqual(
      [gatewayAs, vendorAs].map((issuer) => `dev-auth-server-signing-keys-127.0.0.1-${new URL(issuer).port}.json`).sort(),
    );
    expect(await signingKeyIdsOf(config, gatewayAs)).toEqual(gatewayKeys);
  });
});
