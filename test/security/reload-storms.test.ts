import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompiledConfig } from '../../src/config/types.js';
import { createConfigReloader, type ConfigReloader } from '../../src/reload/config-reloader.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { oneRouteYaml } from '../helpers/config-yaml.js';

/** K13: directory events that leave the bytes unchanged reload nothing; a broken file is reported once per content. */

let dir: string;
let file: string;
let applied: number;
let lastApplied: CompiledConfig | undefined;
let invalid: number;
let logs: string[];
let reloader: ConfigReloader;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcpgw-storm-'));
  file = join(dir, 'gateway.yaml');
  await writeFile(file, oneRouteYaml('/calc/mcp'));
  applied = 0;
  lastApplied = undefined;
  invalid = 0;
  const captured = captureLogs();
  logs = captured.lines;
  reloader = await createConfigReloader({
    file,
    apply: (config) => {
      applied += 1;
      lastApplied = config;
      return Promise.resolve();
    },
    onInvalid: () => (invalid += 1),
    logger: captured.logger,
  });
});

afterEach(() => rm(dir, { recursive: true, force: true }));

const failures = () => logs.filter((line) => line.includes('config reload failed')).length;

describe('K13 reload storms', () => {
  it('K13 a burst of file events over unchanged bytes reloads nothing', async () => {
    for (let event = 0; event < 20; event += 1) expect(await reloader.reload('file')).toEqual({ result: 'unchanged' });
    expect(applied).toBe(0);
  });

  it('K13 a broken file is reported once per distinct content, however many events arrive', async () => {
    await writeFile(file, 'routes: [');
    for (let event = 0; event < 10; event += 1) await reloader.reload('file');
    expect(failures()).toBe(1);
    expect(invalid).toBe(1);
    await writeFile(file, 'routes: [[');
    for (let event = 0; event < 10; event += 1) await reloader.reload('file');
    expect(failures()).toBe(2);
    // Fixed: applied once; more events over the fixed bytes change nothing.
    await writeFile(file, oneRouteYaml('/fixed/mcp'));
    for (let event = 0; event < 10; event += 1) await reloader.reload('file');
    expect(applied).toBe(1);
    expect(failures()).toBe(2);
  });

  it('K13 a missing file (mid ConfigMap swap) is reported once per error, not per event', async () => {
    await unlink(file);
    for (let event = 0; event < 10; event += 1) await reloader.reload('file');
    expect(failures()).toBe(1);
  });

  it('K13 SIGHUP always reloads, even over the same bytes (a ${file:} secret may have changed)', async () => {
    expect(await reloader.reload('signal')).toEqual({ result: 'success' });
    expect(await reloader.reload('signal')).toEqual({ result: 'success' });
    expect(applied).toBe(2);
  });

  it('K13 a ${file:} secret rotated under unchanged config bytes: file events skip it, SIGHUP reads and applies it', async () => {
    const tokenFile = join(dir, 'upstream-token');
    await writeFile(tokenFile, 'token-before');
    await writeFile(file, oneRouteYaml('/calc/mcp').replace('upstream: { url: "http://127.0.0.1:3000/mcp" }', `upstream: { url: "http://127.0.0.1:3000/mcp", auth: { type: bearer, token: "\${file:${tokenFile}}" } }`));
    const upstreamToken = (): string | undefined => {
      const auth = lastApplied?.routes[0]?.upstream.auth;
      return auth?.type === 'bearer' ? auth.token.reveal() : undefined;
    };
    expect(await reloader.reload('file')).toEqual({ result: 'success' });
    expect(upstreamToken()).toBe('token-before');

    await writeFile(tokenFile, 'token-after');
    expect(await reloader.reload('file')).toEqual({ result: 'unchanged' });
    expect(upstreamToken()).toBe('token-before');
    expect(await reloader.reload('signal')).toEqual({ result: 'success' });
    expect(upstreamToken()).toBe('token-after');
  });

  it('K13 going back to content that failed before is tried again only by a signal or a change', async () => {
    await writeFile(file, 'routes: [');
    await reloader.reload('file');
    await writeFile(file, oneRouteYaml('/a/mcp'));
    await reloader.reload('file');
    await writeFile(file, 'routes: [');
    await reloader.reload('file');
    expect(failures()).toBe(2);
    expect(applied).toBe(1);
  });
});
