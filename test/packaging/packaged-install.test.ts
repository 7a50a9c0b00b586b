import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, listen } from '../helpers/net.js';

/**
 * The image's install steps, for real (no Docker engine runs here): build, `npm pack`, install the tarball into an
 * empty directory with production dependencies only, then run the installed `mcp-auth-gateway` binary.
 * Slow (a real npm install, from the npm cache when it can).
 */

const run = promisify(execFile);
const ROOT_DIR = fileURLToPath(new URL('../../', import.meta.url));
const INSTALL_TIMEOUT_MS = 300_000;
const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

let workDir = '';
let installDir = '';
let packedFiles: string[] = [];
const bin = () => join(installDir, 'node_modules', '.bin', 'mcp-auth-gateway');

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'mcpgw-packaged-'));
  installDir = join(workDir, 'install');
  await mkdir(installDir);
  await writeFile(join(installDir, 'package.json'), JSON.stringify({ name: 'packaged-install-smoke', private: true }));
  // `npm pack` runs no build (package.json has no prepack), so build first: idempotent, and dist/ is git-ignored.
  await run('npm', ['run', 'build'], { cwd: ROOT_DIR, env: NPM_ENV });
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', workDir], { cwd: ROOT_DIR, env: NPM_ENV });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  if (packed === undefined) throw new Error('npm pack reported no package');
  packedFiles = packed.files.map((file) => file.path);
  await run(
    'npm',
    ['install', '--omit=dev', '--ignore-scripts', '--prefer-offline', join(workDir, packed.filename)],
    { cwd: installDir, env: NPM_ENV },
  );
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  if (workDir !== '') await rm(workDir, { recursive: true, force: true });
});

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(bin(), args, { cwd: installDir, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Bounded readiness polling of the spawned gateway: the one place a short wait between attempts is the point. */
async function pollStatus(url: string, wanted: number, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`gateway exited early with code ${child.exitCode}`);
    const status = await fetch(url).then((response) => response.status, () => 0);
    if (status === wanted) return;
    await delay(100);
  }
  throw new Error(`${url} never answered ${wanted}`);
}

describe('packaged install (npm pack → npm install --omit=dev)', { timeout: 60_000 }, () => {
  it('packs the compiled CLI, the JSON Schema and the example configs, no sources or tests', () => {
    expect(packedFiles).toEqual(expect.arrayContaining([
      'dist/main.js',
      'schema/config.schema.json',
      'config/sidecar.yaml',
      'config/kubernetes.yaml',
      'package.json',
    ]));
    expect(packedFiles.filter((path) => /^(src|test|helm|scripts)\//.test(path) || path.endsWith('.ts'))).toEqual([]);
  });

  it('installs production dependencies only', () => {
    const modules = join(installDir, 'node_modules');
    expect(existsSync(join(modules, 'mcp-auth-gateway', 'dist', 'main.js'))).toBe(true);
    expect(existsSync(join(modules, 'fastify'))).toBe(true);
    for (const devOnly of ['typescript', 'vitest', 'tsx', 'testcontainers']) expect(existsSync(join(modules, devOnly))).toBe(false);
  });

  it('check-config exits 0 for the shipped sidecar recipe', async () => {
    const sidecar = join(installDir, 'node_modules', 'mcp-auth-gateway', 'config', 'sidecar.yaml');
    const outcome = await cli(['check-config', sidecar]);
    expect(outcome.stderr).not.toMatch(/problem/);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('OK');
  });

  it('check-config exits 1 naming the YAML path of a bad value', async () => {
    const file = join(workDir, 'bad.yaml');
    await writeFile(file, `public_url: https://gw.example.com
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: http://127.0.0.1:3000/mcp }
    authorization_servers: [https://auth.example.com]
    tokens:
      jwt: { issuer: not-a-url }
`);
    const outcome = await cli(['check-config', file]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('routes.0.tokens.jwt.issuer');
  });

  it('serve answers health, readiness and a proxied call, then exits cleanly on SIGTERM', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'smoke', alg: 'ES256', use: 'sig' }] };
    const issuerServer = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
    });
    const upstream = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
    });
    const issuer = `http://127.0.0.1:${await listen(issuerServer)}`;
    const upstreamUrl = `http://127.0.0.1:${await listen(upstream)}/mcp`;
    const [port, adminPort] = [await freePort(), await freePort()];
    const base = `http://127.0.0.1:${port}`;
    const configFile = join(workDir, 'serve.yaml');
    await writeFile(configFile, `listen: { host: 127.0.0.1, port: ${port} }
admin: { host: 127.0.0.1, port: ${adminPort} }
public_url: ${base}
log: { level: warn }
routes:
  - name: smoke
    path: /smoke/mcp
    upstream: { url: ${upstreamUrl} }
    authorization_servers: [${issuer}]
    tokens:
      jwt: { issuer: ${issuer}, jwks_uri: ${issuer}/jwks, algorithms: [ES256] }
`);

    const child = spawn(bin(), ['serve', '--config', configFile], { cwd: installDir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      await pollStatus(`${base}/healthz`, 200, child);
      await pollStatus(`${base}/readyz`, 200, child);

      const challenge = await fetch(`${base}/smoke/mcp`, { method: 'POST' });
      expect(challenge.status).toBe(401);
      expect(challenge.headers.get('www-authenticate')).toContain('resource_metadata=');

      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'smoke' })
        .setIssuer(issuer)
        .setAudience(`${base}/smoke/mcp`)
        .setSubject('smoke-user')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
      const call = await fetch(`${base}/smoke/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      expect(call.status).toBe(200);
      expect(await call.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });

      child.kill('SIGTERM');
      const [code, signal] = await exited;
      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      issuerServer.close();
      upstream.close();
    }
  });
});
