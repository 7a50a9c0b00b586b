import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SIGN_IN_PREFIX } from '../../src/client/browser.js';
import { visitInBrowser } from './user-agent.js';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What a user does with a "Sign in at:" line: open it (here in a headless browser); other lines are ignored. */
export function followSignIn(line: string, visits: Promise<unknown>[], onError: (error: unknown) => void): void {
  if (line.startsWith(SIGN_IN_PREFIX)) visits.push(visitInBrowser(new URL(line.slice(SIGN_IN_PREFIX.length))).catch(onError));
}

/**
 * Runs the real CLI entry point (src/main.ts through tsx) and plays the user for `login`: every "Sign in at:" line
 * it prints is visited in a headless browser (redirects followed, cookies kept) through to login's loopback
 * redirect. `echo` also forwards its output as it comes (the conformance driver).
 */
export async function runCli(args: readonly string[], options: { readonly env?: NodeJS.ProcessEnv; readonly echo?: boolean } = {}): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src', 'main.ts'), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    if (options.echo === true) process.stdout.write(chunk);
  });
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  let stderr = '';
  const visits: Promise<unknown>[] = [];
  for await (const line of createInterface({ input: child.stderr })) {
    stderr += `${line}\n`;
    if (options.echo === true) process.stderr.write(`${line}\n`);
    followSignIn(line, visits, (error) => (stderr += `(browser: ${String(error)})\n`));
  }
  const code = await closed;
  await Promise.all(visits);
  return { code, stdout, stderr };
}

