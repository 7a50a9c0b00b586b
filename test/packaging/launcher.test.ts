import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const LAUNCHER = new URL('../../bin/mcp-auth-gateway.js', import.meta.url);

/** A copy of the package's launcher next to a dist/ of our own, so the real build output is never touched. */
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mcpgw-launcher-'));
  await mkdir(join(root, 'bin'));
  await copyFile(LAUNCHER, join(root, 'bin', 'mcp-auth-gateway.js'));
  await writeFile(join(root, 'package.json'), JSON.stringify({ type: 'module' }));
});

afterAll(() => rm(root, { recursive: true, force: true }));

async function launch(): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(root, 'bin', 'mcp-auth-gateway.js'), '--help']);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the mcp-auth-gateway command (bin/mcp-auth-gateway.js)', () => {
  it('before npm run build, says how to build instead of "not found"', async () => {
    const outcome = await launch();
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe(`mcp-auth-gateway is not built yet. Build it once: cd ${root} && npm run build\n`);
  });

  it('once built, runs the compiled CLI with its arguments', async () => {
    await mkdir(join(root, 'dist'), { recursive: true });
    await writeFile(join(root, 'dist', 'main.js'), 'process.stdout.write(`cli ${process.argv.slice(2).join(" ")}`);\n');
    expect(await launch()).toEqual({ code: 0, stdout: 'cli --help', stderr: '' });
  });
});
