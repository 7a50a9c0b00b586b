import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { JWK } from 'jose';

/** One resource's tokens from one authorization server, as `login` keeps them. */
export interface StoredToken {
  /** The RFC 8707 resource the token was requested for. */
  readonly resource: string;
  /** The authorization server (its issuer) that issued it: tokens and clients are bound to it (MCP 2026-07-28). */
  readonly authorizationServer: string;
  readonly clientId: string;
  /** A dynamically registered client's secret: refreshing authenticates as that client, and nothing else has it. */
  readonly clientSecret?: string;
  readonly accessToken: string;
  readonly tokenType: string;
  /** Rotated on every refresh that returns a new one; never printed. */
  readonly refreshToken?: string;
  readonly scope?: string;
  /** ISO 8601, from `expires_in`. */
  readonly expiresAt?: string;
  readonly obtainedAt: string;
  /**
   * A DPoP-bound token's key (RFC 9449): the private JWK every proof is signed with, one per authorization server
   * (a new token from that server is bound to the same key); never printed.
   */
  readonly dpopKey?: JWK;
}

/** Tokens by authorization server, then by resource. */
export type TokenStore = Readonly<Record<string, Readonly<Record<string, StoredToken>>>>;

/** Version 2 keys tokens by authorization server; version 1 (by resource only) is read and rewritten as 2. */
interface TokenFile {
  readonly version: 2;
  readonly authorizationServers: TokenStore;
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A version 1 store (`tokens` by resource, each naming its authorization server) in the version 2 layout. */
function fromVersion1(tokens: Record<string, unknown>): TokenStore {
  const store: Record<string, Record<string, StoredToken>> = {};
  for (const token of Object.values(tokens)) {
    if (!isRecord(token) || typeof token.authorizationServer !== 'string' || typeof token.resource !== 'string') continue;
    const stored = token as unknown as StoredToken;
    store[stored.authorizationServer] = { ...store[stored.authorizationServer], [stored.resource]: stored };
  }
  return store;
}

/** Every stored token by authorization server and resource; an absent file is an empty store. */
export async function readTokenStore(path: string): Promise<TokenStore> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The parser's message quotes part of the file, which may be another resource's token.
    throw new Error(`${path} is not valid JSON`);
  }
  if (isRecord(parsed) && parsed.version === 2 && isRecord(parsed.authorizationServers)) return parsed.authorizationServers as TokenStore;
  if (isRecord(parsed) && parsed.version === 1 && isRecord(parsed.tokens)) return fromVersion1(parsed.tokens);
  throw new Error(`${path} is not a token store written by this version`);
}

/** The token `authorizationServer` issued for `resource`: never one another server issued. */
export function findToken(store: TokenStore, authorizationServer: string, resource: string): StoredToken | undefined {
  return Object.hasOwn(store, authorizationServer) ? store[authorizationServer]?.[resource] : undefined;
}

/** The DPoP key of `authorizationServer`'s tokens, when one of them is DPoP-bound. */
export function dpopKeyOf(store: TokenStore, authorizationServer: string): JWK | undefined {
  if (!Object.hasOwn(store, authorizationServer)) return undefined;
  return Object.values(store[authorizationServer] ?? {}).find((token) => token.dpopKey !== undefined)?.dpopKey;
}

export function allTokens(store: TokenStore): StoredToken[] {
  return Object.values(store).flatMap((tokens) => Object.values(tokens));
}

/**
 * Writes the store at `path`: the directory is created 0700 and the file written 0600 (readable by the user only)
 * through a temporary file and a rename, so a crash never leaves half a file. Call `secureTokenStore` first.
 */
async function writeTokenStore(path: string, store: TokenStore): Promise<void> {
  const file: TokenFile = { version: 2, authorizationServers: store };
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

/** Adds or replaces the token of its authorization server and resource (a rotated refresh token replaces the old). */
export async function saveToken(path: string, token: StoredToken): Promise<void> {
  const store = await readTokenStore(path);
  const server = token.authorizationServer;
  await writeTokenStore(path, { ...store, [server]: { ...store[server], [token.resource]: token } });
}

/** Drops the token of `authorizationServer` for `resource` (a refresh token the server refused). */
export async function forgetToken(path: string, authorizationServer: string, resource: string): Promise<void> {
  const store = await readTokenStore(path);
  if (findToken(store, authorizationServer, resource) === undefined) return;
  const remaining = Object.entries(store[authorizationServer] ?? {}).filter(([stored]) => stored !== resource);
  await writeTokenStore(path, { ...store, [authorizationServer]: Object.fromEntries(remaining) });
}

/** The mode and owner of `path`; `follow`: of what a symbolic link points to (a directory may be one). */
async function modeOf(path: string, follow: boolean): Promise<{ mode: number; uid: number; symlink: boolean } | undefined> {
  try {
    const stats = follow ? await stat(path) : await lstat(path);
    return { mode: stats.mode & 0o777, uid: stats.uid, symlink: stats.isSymbolicLink() };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const octal = (mode: number) => mode.toString(8).padStart(4, '0');

/**
 * Before the store is read or written: its directory must be 0700 and the file 0600, both the user's own, since the
 * file holds refresh tokens and client secrets. Looser modes are tightened (each change returned, to be told);
 * a file that is a symbolic link, or a directory or file another user owns, is refused: someone else could read or
 * replace it.
 */
export async function secureTokenStore(path: string): Promise<string[]> {
  const fixed: string[] = [];
  const uid = process.getuid?.();
  for (const [target, wanted, follow] of [
    [dirname(path), 0o700, true],
    [path, 0o600, false],
  ] as const) {
    const found = await modeOf(target, follow);
    if (found === undefined) continue;
    if (found.symlink) throw new Error(`${target} is a symbolic link: the token store must be a plain file of yours`);
    if (uid !== undefined && found.uid !== uid) throw new Error(`${target} belongs to another user (uid ${found.uid}): the token store must be yours alone`);
    if ((found.mode & 0o077) !== 0) {
      await chmod(target, wanted);
      fixed.push(`${target} was mode ${octal(found.mode)}, open to others: now ${octal(wanted)}`);
    }
  }
  return fixed;
}
