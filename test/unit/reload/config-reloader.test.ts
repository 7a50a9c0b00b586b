import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompiledConfig } from '../../../src/config/types.js';
import { createConfigReloader } from '../../../src/reload/config-reloader.js';
import { captureLogs } from '../../helpers/capture-logs.js';
import { oneRouteYaml } from '../../helpers/config-yaml.js';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcpgw-reloader-'));
  file = join(dir, 'gateway.yaml');
  await writeFile(file, oneRouteYaml('/calc/mcp'));
});

afterEach(() => rm(dir, { recursive: true, force: true }));

describe('config reloader', () => {
  it('reloads asked for while one runs are folded into one more', async () => {
    const applied: string[] = [];
    let unblock: () => void = () => undefined;
    let entered: () => void = () => undefined;
    const firstApplyRuns = new Promise<void>((resolve) => (entered = resolve));
    const reloader = await createConfigReloader({
      file,
      apply: (config: CompiledConfig) => {
        applied.push(config.routes[0]?.path ?? '');
        if (applied.length > 1) return Promise.resolve();
        entered();
        return new Promise<void>((resolve) => (unblock = resolve));
      },
      onInvalid: () => undefined,
      logger: captureLogs().logger,
    });
    await writeFile(file, oneRouteYaml('/one/mcp'));
    const first = reloader.reload('file');
    await firstApplyRuns;
    await writeFile(file, oneRouteYaml('/two/mcp'));
    const second = reloader.reload('file');
    const third = reloader.reload('signal');
    expect(third).toBe(second);
    unblock();
    expect(await first).toEqual({ result: 'success' });
    expect(await second).toEqual({ result: 'success' });
    expect(applied).toEqual(['/one/mcp', '/two/mcp']);
  });

  it('a failure is counted once and its problems logged with paths; secret values never appear', async () => {
    let invalid = 0;
    const logs = captureLogs();
    const reloader = await createConfigReloader({
      file,
      apply: () => Promise.resolve(),
      onInvalid: () => void invalid++,
      logger: logs.logger,
      env: { CANARY: 'secret-CANARY-value' },
    });
    await writeFile(file, oneRouteYaml('not-absolute', 'http://127.0.0.1:3000/mcp?token=${env:CANARY}'));
    const outcome = await reloader.reload('file');
    expect(outcome.result).toBe('failure');
    expect(invalid).toBe(1);
    const text = logs.text();
    expect(text).toContain('routes.0.path');
    expect(text).not.toContain('secret-CANARY-value');
  });

  it('K13 an apply that fails is not retried by more file events over the same bytes, but by a signal', async () => {
    let attempts = 0;
    const reloader = await createConfigReloader({
      file,
      apply: () => (++attempts === 1 ? Promise.reject(new Error('cannot build')) : Promise.resolve()),
      onInvalid: () => undefined,
      logger: captureLogs().logger,
    });
    await writeFile(file, oneRouteYaml('/new/mcp'));
    expect((await reloader.reload('file')).result).toBe('failure');
    expect(await reloader.reload('file')).toEqual({ result: 'unchanged' });
    expect(await reloader.reload('signal')).toEqual({ result: 'success' });
    expect(await reloader.reload('file')).toEqual({ result: 'unchanged' });
  });
});
