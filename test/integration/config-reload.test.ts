import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createConfigReloader, type ConfigReloader, type ReloadOutcome } from '../../src/reload/config-reloader.js';
import { watchConfigFile, type ConfigWatcher } from '../../src/reload/watch.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { listenAdmin, sampleValue, scrape } from '../helpers/metrics.js';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

const PUBLIC = 'https://gw.example.test';

let issuer: TestIssuer;
let upstream: TestUpstream;

function route(name: string): string {
  return `
  - name: ${name}
    path: /${name}/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${issuer.issuer}]
    tokens:
      jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] }
`;
}

const configYaml = (...names: string[]) => `public_url: ${PUBLIC}\nroutes:${names.map(route).join('')}`;

async function status(gw: RunningGateway, name: string): Promise<number> {
  const token = await issuer.mint({ aud: `${PUBLIC}/${name}/mcp` });
  const response = await fetch(`${gw.url}/${name}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  return response.status;
}

beforeAll(async () => {
  issuer = await startTestIssuer();
  upstream = await startTestUpstream();
});

afterAll(async () => {
  await Promise.all([issuer.close(), upstream.close()]);
});

let dir: string;
let gw: RunningGateway;
let admin: string;
let logs: ReturnType<typeof captureLogs>;

async function reloaderFor(file: string): Promise<ConfigReloader> {
  return createConfigReloader({
    file,
    apply: (config) => gw.gateway.reload(config),
    onInvalid: () => gw.gateway.metrics.configReload('failure'),
    logger: logs.logger,
    env: {},
  });
}

const failureCount = async () => sampleValue((await scrape(admin)).samples, 'mcp_gateway_config_reloads_total', { result: 'failure' });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcpgw-reload-'));
  gw = await startGateway(configYaml('calc'));
  admin = await listenAdmin(gw.gateway);
  logs = captureLogs();
});

afterEach(async () => {
  await gw.close();
  await rm(dir, { recursive: true, force: true });
});

describe('reload from the config file', () => {
  it('a changed file is applied; an identical one is skipped unless forced by SIGHUP', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, configYaml('calc'));
    const reloader = await reloaderFor(file);
    expect(await reloader.reload('file')).toEqual({ result: 'unchanged' });
    await writeFile(file, configYaml('calc', 'notes'));
    expect(await reloader.reload('file')).toEqual({ result: 'success' });
    expect(await status(gw, 'notes')).toBe(200);
    expect(await reloader.reload('file')).toEqual({ result: 'unchanged' });
    expect(await reloader.reload('signal')).toEqual({ result: 'success' });
    expect(sampleValue((await scrape(admin)).samples, 'mcp_gateway_config_reloads_total', { result: 'success' })).toBe(2);
  });

  it('J1 invalid YAML: the old config keeps serving, the failure is counted and logged', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, configYaml('calc'));
    const reloader = await reloaderFor(file);
    await writeFile(file, `${configYaml('calc', 'notes')}\n  - name: [unclosed\n`);
    const outcome = await reloader.reload('file');
    expect(outcome.result).toBe('failure');
    expect(await status(gw, 'calc')).toBe(200);
    expect(await status(gw, 'notes')).toBe(404);
    expect(await failureCount()).toBe(1);
    const line = logs.lines.map((text) => JSON.parse(text) as { msg: string; problems?: { message: string }[] }).find((entry) => entry.msg.startsWith('config reload failed'));
    expect(line?.problems?.[0]?.message).toMatch(/^YAML syntax error in .*gateway\.yaml at line \d+/);
  });

  it('J2 a semantically bad file: every problem is logged with its YAML path, the old config keeps serving', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, configYaml('calc'));
    const reloader = await reloaderFor(file);
    const bad = configYaml('calc', 'calc')
      .replace(`issuer: ${issuer.issuer}`, 'issuer: http://auth.example.com')
      .concat('unknown_key: 1\n');
    await writeFile(file, bad);
    const outcome = (await reloader.reload('file')) as Extract<ReloadOutcome, { result: 'failure' }>;
    expect(outcome.result).toBe('failure');
    const logged = logs.lines.map((text) => JSON.parse(text) as { msg: string; problems?: { path: string }[] }).find((entry) => entry.problems);
    const paths = logged?.problems?.map((problem) => problem.path);
    expect(paths).toEqual(expect.arrayContaining(['unknown_key']));
    expect(outcome.problems.map((problem) => problem.path)).toEqual(paths);
    await writeFile(file, configYaml('calc', 'calc'));
    const duplicate = (await reloader.reload('file')) as Extract<ReloadOutcome, { result: 'failure' }>;
    expect(duplicate.problems.map((problem) => problem.path)).toEqual(['routes.1.name', 'routes.1.path']);
    await writeFile(file, configYaml('calc').replace(`issuer: ${issuer.issuer}`, 'issuer: http://auth.example.com'));
    const insecure = (await reloader.reload('file')) as Extract<ReloadOutcome, { result: 'failure' }>;
    expect(insecure.problems.map((problem) => problem.path)).toEqual(['routes.0.tokens.jwt.issuer']);
    expect(await status(gw, 'calc')).toBe(200);
    expect(await failureCount()).toBe(3);
  });

  it('a missing file is a failed reload, not a crash', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, configYaml('calc'));
    const reloader = await reloaderFor(file);
    await rm(file);
    expect(await reloader.reload('signal')).toMatchObject({ result: 'failure', problems: [{ path: '', message: expect.stringContaining('ENOENT') as unknown }] });
    expect(await status(gw, 'calc')).toBe(200);
  });
});

describe('file watch', () => {
  let watcher: ConfigWatcher | undefined;

  afterEach(() => watcher?.close());

  /** Watches like `serve` does and resolves with the first reload that did something. */
  function watchUntilApplied(file: string, reloader: ConfigReloader): Promise<ReloadOutcome> {
    return new Promise((resolve) => {
      watcher = watchConfigFile(
        file,
        () => {
          void reloader.reload('file').then((outcome) => {
            if (outcome.result !== 'unchanged') resolve(outcome);
          });
        },
        { debounceMs: 20 },
      );
    });
  }

  it('sees a Kubernetes ConfigMap update: the ..data symlink replaced atomically by rename', async () => {
    // The layout kubelet writes: config.yaml → ..data/config.yaml, ..data → ..<timestamp>/
    await mkdir(join(dir, '..2024_01_01_00_00_00.1'));
    await writeFile(join(dir, '..2024_01_01_00_00_00.1', 'config.yaml'), configYaml('calc'));
    await symlink('..2024_01_01_00_00_00.1', join(dir, '..data'));
    await symlink('..data/config.yaml', join(dir, 'config.yaml'));
    await mkdir(join(dir, '..2024_01_01_00_05_00.2'));
    await writeFile(join(dir, '..2024_01_01_00_05_00.2', 'config.yaml'), configYaml('calc', 'notes'));
    const file = join(dir, 'config.yaml');
    const reloader = await reloaderFor(file);
    const applied = watchUntilApplied(file, reloader);

    await symlink('..2024_01_01_00_05_00.2', join(dir, '..data_tmp'));
    await rename(join(dir, '..data_tmp'), join(dir, '..data'));

    expect(await applied).toEqual({ result: 'success' });
    expect(await status(gw, 'notes')).toBe(200);
  });

  it('sees an editor-style replace (write a temp file, rename over) and a bad edit keeps the old config', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, configYaml('calc'));
    const reloader = await reloaderFor(file);
    const applied = watchUntilApplied(file, reloader);
    await writeFile(join(dir, '.gateway.yaml.tmp'), 'routes: [');
    await rename(join(dir, '.gateway.yaml.tmp'), file);
    expect((await applied).result).toBe('failure');
    expect(await status(gw, 'calc')).toBe(200);
  });
});
