import { spawn } from 'node:child_process';

/** The line that carries an authorization URL: people (and the conformance driver) look for it. */
export const SIGN_IN_PREFIX = 'Sign in at: ';

/**
 * The command that opens a URL here: `$BROWSER` when set (split on whitespace, the URL appended), else
 * `open` on macOS, `xdg-open` elsewhere. Windows has no opener here: the URL is only printed.
 */
export function browserCommand(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] | undefined {
  const configured = env.BROWSER?.trim().split(/\s+/).filter((part) => part !== '');
  if (configured !== undefined && configured.length > 0) return configured;
  if (platform === 'darwin') return ['open'];
  if (platform === 'win32') return undefined;
  return ['xdg-open'];
}

/**
 * Starts the browser on `url` without waiting for it; resolves false when there is no opener or it cannot be
 * started (the caller has printed the URL anyway). The URL is an argument, never passed through a shell.
 */
export function openBrowser(url: URL, command = browserCommand()): Promise<boolean> {
  const [program, ...args] = command ?? [];
  if (program === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(program, [...args, url.href], { stdio: 'ignore', detached: true });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
