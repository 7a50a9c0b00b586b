import { chmod, mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTokenStore, saveToken, storeDirectoryWarning, tokenStorePath, type StoredToken } from '../../../src/client/token-store.js';

function token(resource: string, accessToken = 'access'): StoredToken {
  return { resource, authorizationServer: 'https://as.example.com', clientId: 'c', accessToken, tokenType: 'Bearer', obtainedAt: '2026-01-01T00:00:00.000Z' };
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

  it('creates the directory 0700 and the file 0600; keys by resource; replaces a resource, keeps the others', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'token-store-')), 'nested', 'mcp-auth-gateway');
    const path = join(dir, 'tokens.json');
    expect(await readTokenStore(path)).toEqual({});
    await saveToken(path, token('https://a.example.com/mcp', 'first'));
    await saveToken(path, token('https://b.example.com/mcp'));
    await saveToken(path, token('https://a.example.com/mcp', 'second'));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const tokens = await readTokenStore(path);
    expect(Object.keys(tokens).sort()).toEqual(['https://a.example.com/mcp', 'https://b.example.com/mcp']);
    expect(tokens['https://a.example.com/mcp']?.accessToken).toBe('second');
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: 1 });
  });

  it('a file with broader permissions is rewritten 0600', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'token-store-')), 'tokens.json');
    await writeFile(path, JSON.stringify({ version: 1, tokens: {} }), { mode: 0o644 });
    await saveToken(path, token('https://a.example.com/mcp'));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it.each<[string, number, string | undefined]>([
    ['0755', 0o755, 'is mode 0755: others can list it (tokens.json itself is 0600); chmod 700'],
    ['0775', 0o775, 'is mode 0775: others can replace files in it (tokens.json itself is 0600); chmod 700'],
    ['0700', 0o700, undefined],
  ])('G7: an existing directory of mode %s keeps its mode (it may be one the user chose), the file is 0600, and a warning says what is open', async (_mode, mode, warning) => {
    const dir = join(await mkdtemp(join(tmpdir(), 'token-store-')), 'config');
    await mkdir(dir);
    await chmod(dir, mode);
    const path = join(dir, 'tokens.json');
    await saveToken(path, token('https://a.example.com/mcp'));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(mode);
    if (warning === undefined) expect(await storeDirectoryWarning(path)).toBeUndefined();
    else expect(await storeDirectoryWarning(path)).toBe(`${dir} ${warning} ${dir} keeps it private`);
  });

  it('G7: a corrupt file: "<path> is not valid JSON", never the parser message (it quotes the file, other tokens included)', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'token-store-')), 'tokens.json');
    await writeFile(path, '{"version":1,"tokens":{"https://a.example.com/mcp":{"accessToken":"OTHER-SECRET-TOKEN" oops}}}');
    await expect(readTokenStore(path)).rejects.toThrow(new Error(`${path} is not valid JSON`));
  });

  it('refuses a file it did not write', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'token-store-')), 'tokens.json');
    await writeFile(path, '{"tokens": []}');
    await expect(readTokenStore(path)).rejects.toThrow('is not a token store written by this version');
  });
});
