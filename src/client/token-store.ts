import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** One resource's token, as `login` keeps it. */
export interface StoredToken {
  /** The RFC 8707 resource the token was requested for: the key of the store. */
  readonly resource: string;
  readonly authorizationServer: string;
  readonly clientId: string;
  readonly accessToken: string;
  readonly tokenType: string;
  readonly scope?: string;
  /** ISO 8601, from `expires_in`. */
  readonly expiresAt?: string;
  readonly obtainedAt: string;
}

interface TokenFile {
  readonly version: 1;
  readonly tokens: Record<string, StoredToken>;
}

/** Overrides the directory (tests, several profiles). */
export const CONFIG_DIR_VARIABLE = 'MCP_AUTH_GATEWAY_CONFIG_DIR';

/** `$MCP_AUTH_GATEWAY_CONFIG_DIR/tokens.json`, else `$XDG_CONFIG_HOME/mcp-auth-gateway/tokens.json`, else `~/.config/…`. */
export function tokenStorePath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const override = env[CONFIG_DIR_VARIABLE];
  if (override !== undefined && override !== '') return join(override, 'tokens.json');
  const configHome = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(home, '.config');
  return join(configHome, 'mcp-auth-gateway', 'tokens.json');
}

/** Every stored token by resource; an absent file is an empty store. */
export async function readTokenStore(path: string): Promise<Record<string, StoredToken>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: Partial<TokenFile>;
  try {
    parsed = JSON.parse(text) as Partial<TokenFile>;
  } catch {
    // The parser's message quotes part of the file, which may be another resource's token.
    throw new Error(`${path} is not valid JSON`);
  }
  if (parsed.version !== 1 || typeof parsed.tokens !== 'object' || parsed.tokens === null) {
    throw new Error(`${path} is not a token store written by this version`);
  }
  return parsed.tokens;
}

/**
 * Adds or replaces the token for its resource. A new directory is created 0700 (an existing one keeps its mode:
 * see storeDirectoryWarning) and the file is written 0600 (readable by the user only) through a temporary file and
 * a rename, so a crash never leaves half a file.
 */
export async function saveToken(path: string, token: StoredToken): Promise<void> {
  const tokens = { ...(await readTokenStore(path)), [token.resource]: token };
  const file: TokenFile = { version: 1, tokens };
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    await chmod(temporary, 0o600);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * A warning when the directory of the store at `path` is open to others. It is not changed: it may be one the user
 * chose with $MCP_AUTH_GATEWAY_CONFIG_DIR and shares. The token file is 0600 either way, but others could list the
 * directory, or, when they may write to it, replace the file.
 */
export async function storeDirectoryWarning(path: string): Promise<string | undefined> {
  const dir = dirname(path);
  const mode = (await stat(dir)).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  const risk = (mode & 0o022) === 0 ? 'others can list it' : 'others can replace files in it';
  return `${dir} is mode ${mode.toString(8).padStart(4, '0')}: ${risk} (tokens.json itself is 0600); chmod 700 ${dir} keeps it private`;
}
