import { chmod, mkdir, mkdtemp, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allTokens, findToken, forgetToken, readTokenStore, saveToken, secureTokenStore, tokenStorePath, type StoredToken } from '../../../src/client/token-store.js';

const AS = 'https://as.example.com';

function token(resource: string, accessToken = 'access', authorizationServer = AS): StoredToken {
  return { resource, authorizationServer, clientId: 'c', accessToken, tokenType: 'Bearer', refreshToken: `refresh-${accessToken}`, obtainedAt: '2026-01-01T00:00:00.000Z' };
}

async function storePath(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'token-store-')), 'tokens.json');
}

describe('token store', () => {
  it.each<[string, NodeJS.ProcessEnv, string]>([
    ['the override variable', { MCP_AUTH_GATEWAY_CONFIG_DIR: '/tmp/profile', XDG_CONFIG_HOME: '/xdg' }, '/tmp/profile/tokens.json'],
    ['XDG_CONFIG_HOME', { XDG_CONFIG_HOME: '/xdg' }, '/xdg/mcp-auth-gateway/tokens.json'],
    ['~/.config by default', {}, '/home/u/.config/mcp-auth-gateway/tokens.json'],
    ['empty variables count as unset', { MCP_AUTH_GATEWAY_CONFIG_DIR: '', XDG_CONFIG_HOME: '' }, '/home/u/.config/mcp-auth-gateway/tokens.json'],
  ])('path from %s', (_name, env, path) => {
    expect(tokenStorePath(env, '/home/u')).toBe(path);
  });

  it('creates the directory 0700 and the file 0600; keys by authorization server, then resource; replaces one, keeps the others', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'token-store-')), 'nested', 'mcp-auth-gateway');
    const path = join(dir, 'tokens.json');
    expect(await readTokenStore(path)).toEqual({});
    await saveToken(path, token('https://a.example.com/mcp', 'first'));
    await saveToken(path, token('https://b.example.com/mcp'));
    await saveToken(path, token('https://a.example.com/mcp', 'second'));
    await saveToken(path, token('https://a.example.com/mcp', 'other-server', 'https://other-as.example.com'));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const store = await readTokenStore(path);
    expect(Object.keys(store).sort()).toEqual([AS, 'https://other-as.example.com']);
    expect(findToken(store, AS, 'https://a.example.com/mcp')).toMatchObject({ accessToken: 'second', refreshToken: 'refresh-second' });
    expect(allTokens(store)).toHaveLength(3);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: 2 });
  });

  it("a token is found only under the authorization server that issued it, never another server's", async () => {
    const path = await storePath();
    await saveToken(path, token('https://a.example.com/mcp', 'from-old-server', 'https://old-as.example.com'));
    const store = await readTokenStore(path);
    expect(findToken(store, AS, 'https://a.example.com/mcp')).toBeUndefined();
    expect(findToken(store, 'https://old-as.example.com', 'https://a.example.com/mcp')?.accessToken).toBe('from-old-server');
    // Names that are properties of every object are not servers.
    expect(findToken(store, 'constructor', 'https://a.example.com/mcp')).toBeUndefined();
  });

  it('forgets one token (a refused refresh token), keeping the rest', async () => {
    const path = await storePath();
    await saveToken(path, token('https://a.example.com/mcp', 'a'));
    await saveToken(path, token('https://b.example.com/mcp', 'b'));
    await forgetToken(path, AS, 'https://a.example.com/mcp');
    expect(allTokens(await readTokenStore(path)).map((stored) => stored.accessToken)).toEqual(['b']);
  });

  it('reads a version 1 store (by resource) as version 2, by the authorization server each token names; the next save writes version 2', async () => {
    const path = await storePath();
    const v1 = { version: 1, tokens: { 'https://a.example.com/mcp': token('https://a.example.com/mcp', 'old'), 'https://b.example.com/mcp': token('https://b.example.com/mcp', 'b', 'https://b-as.example.com') } };
    await writeFile(path, JSON.stringify(v1), { mode: 0o600 });
    const store = await readTokenStore(path);
    expect(findToken(store, AS, 'https://a.example.com/mcp')?.accessToken).toBe('old');
    expect(findToken(store, 'https://b-as.example.com', 'https://b.example.com/mcp')?.accessToken).toBe('b');
    await saveToken(path, token('https://c.example.com/mcp', 'c'));
    const file = JSON.parse(await readFile(path, 'utf8')) as { version: number; authorizationServers: Record<string, Record<string, unknown>> };
    expect(file.version).toBe(2);
    expect(Object.keys(file.authorizationServers[AS] ?? {}).sort()).toEqual(['https://a.example.com/mcp', 'https://c.example.com/mcp']);
  });

  it('a file with broader permissions is rewritten 0600', async () => {
    const path = await storePath();
    await writeFile(path, JSON.stringify({ version: 2, authorizationServers: {} }), { mode: 0o644 });
    await saveToken(path, token('https://a.example.com/mcp'));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('G7: a corrupt file: "<path> is not valid JSON", never the parser message (it quotes the file, other tokens included)', async () => {
    const path = await storePath();
    await writeFile(path, '{"version":2,"authorizationServers":{"x":{"accessToken":"OTHER-SECRET-TOKEN" oops}}}');
    await expect(readTokenStore(path)).rejects.toThrow(new Error(`${path} is not valid JSON`));
  });

  it('refuses a file it did not write', async () => {
    const path = await storePath();
    await writeFile(path, '{"tokens": []}');
    await expect(readTokenStore(path)).rejects.toThrow('is not a token store written by this version');
  });
});

describe('token store permissions: refresh tokens and client secrets are readable by the user only', () => {
  it.each<[string, number, number]>([
    ['a directory others can list', 0o755, 0o600],
    ['a directory others can write to', 0o777, 0o600],
    ['a file others can read', 0o700, 0o644],
    ['a file the group can write', 0o700, 0o620],
  ])('%s is tightened (directory 0700, file 0600), and each change is told', async (_name, directoryMode, fileMode) => {
    const dir = join(await mkdtemp(join(tmpdir(), 'token-store-')), 'config');
    await mkdir(dir);
    const path = join(dir, 'tokens.json');
    await writeFile(path, JSON.stringify({ version: 2, authorizationServers: {} }));
    await chmod(dir, directoryMode);
    await chmod(path, fileMode);
    const fixed = await secureTokenStore(path);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const expected = [
      ...(directoryMode === 0o700 ? [] : [`${dir} was mode 0${directoryMode.toString(8)}, open to others: now 0700`]),
      ...(fileMode === 0o600 ? [] : [`${path} was mode 0${fileMode.toString(8)}, open to others: now 0600`]),
    ];
    expect(fixed).toEqual(expected);
  });

  it('a private store, or none yet, needs nothing', async () => {
    const path = await storePath();
    expect(await secureTokenStore(path)).toEqual([]);
    await saveToken(path, token('https://a.example.com/mcp'));
    expect(await secureTokenStore(path)).toEqual([]);
  });

  it('a token file that is a symbolic link is refused: it could point at a file someone else controls', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'token-store-'));
    const elsewhere = join(dir, 'elsewhere.json');
    await writeFile(elsewhere, JSON.stringify({ version: 2, authorizationServers: {} }), { mode: 0o600 });
    await symlink(elsewhere, join(dir, 'tokens.json'));
    await expect(secureTokenStore(join(dir, 'tokens.json'))).rejects.toThrow('is a symbolic link');
  });
});
