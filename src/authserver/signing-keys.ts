import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { JWKS } from 'oidc-provider';

const SIGNING_ALG = 'ES256';
/** Owner read/write only: the file holds a private key. */
const FILE_MODE = 0o600;
const DIRECTORY_MODE = 0o700;

/** A fresh ES256 signing key, with its RFC 7638 thumbprint as `kid`. */
export async function generateSigningKeys(): Promise<JWKS> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
  return { keys: [{ ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG, use: 'sig' }] };
}

/**
 * Where `dev-auth-server` and `npm run demo` keep an issuer's signing key unless told otherwise: the user's cache
 * directory (`$XDG_CACHE_HOME`, else `~/.cache`), so only that user can read it and a restart keeps it; one file
 * per issuer (host and port), so two development servers (the gateway's and a vendor's) never share a key.
 */
export function defaultSigningKeysFile(issuer: string, env: NodeJS.ProcessEnv = process.env): string {
  return cacheFileOf('signing-keys', issuer, env);
}

/** Where `dev-auth-server` keeps an issuer's dynamically registered clients: next to its signing key. */
export function defaultClientsFile(issuer: string, env: NodeJS.ProcessEnv = process.env): string {
  return cacheFileOf('clients', issuer, env);
}

function cacheFileOf(kind: string, issuer: string, env: NodeJS.ProcessEnv): string {
  const cache = env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  const { hostname, port, protocol } = new URL(issuer);
  const server = `${hostname}-${port || (protocol === 'https:' ? '443' : '80')}`.replace(/[^A-Za-z0-9.-]/g, '_');
  return join(cache, 'mcp-auth-gateway', `dev-auth-server-${kind}-${server}.json`);
}

function isSigningKeys(value: unknown): value is JWKS {
  const keys: unknown = typeof value === 'object' && value !== null ? (value as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(keys) || keys.length !== 1) return false;
  const key = keys[0] as Record<string, unknown>;
  return (
    key.kty === 'EC' &&
    key.crv === 'P-256' &&
    key.alg === SIGNING_ALG &&
    ['d', 'x', 'y', 'kid'].every((member) => typeof key[member] === 'string' && key[member] !== '')
  );
}

async function readSigningKeys(file: string): Promise<JWKS | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (((await stat(file)).mode & 0o077) !== 0) {
    throw new Error(`signing key file ${file} is accessible to other users: chmod 600 it, or delete it for a new key`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isSigningKeys(parsed)) throw new Error(`signing key file ${file} does not hold one ES256 private JWK: delete it for a new key`);
  return parsed;
}

/**
 * The signing key kept in `file`, created (mode 0600, directory 0700) when the file does not exist, so a
 * restarted development server still validates the tokens it issued before. Two servers starting at once agree
 * on one key: the file is linked into place exclusively and the loser reads the winner's.
 */
export async function loadOrCreateSigningKeys(file: string): Promise<JWKS> {
  const existing = await readSigningKeys(file);
  if (existing !== undefined) return existing;
  const keys = await generateSigningKeys();
  await mkdir(dirname(file), { recursive: true, mode: DIRECTORY_MODE });
  // Written whole under a private name, then linked into place: the file never exists half-written.
  const draft = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(draft, `${JSON.stringify(keys)}\n`, { mode: FILE_MODE, flag: 'wx' });
  try {
    await link(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return loadOrCreateSigningKeys(file);
  } finally {
    await rm(draft, { force: true });
  }
  return keys;
}
