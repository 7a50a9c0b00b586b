import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultSigningKeysFile, loadOrCreateSigningKeys } from '../../../src/authserver/signing-keys.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'signing-keys-'));
});
afterEach(() => rm(directory, { recursive: true, force: true }));

describe('loadOrCreateSigningKeys', () => {
  it('creates one ES256 private key, owner-only (file 0600, directory 0700), and returns the same key later', async () => {
    const file = join(directory, 'cache', 'keys.json');
    const created = await loadOrCreateSigningKeys(file);
    expect(created.keys).toHaveLength(1);
    expect(created.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(directory, 'cache'))).mode & 0o777).toBe(0o700);
    expect(await loadOrCreateSigningKeys(file)).toEqual(created);
  });

  it('two servers starting at once end up with the same key', async () => {
    const file = join(directory, 'keys.json');
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => loadOrCreateSigningKeys(file)));
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(a);
  });

  it('refuses a key file other users can read', async () => {
    const file = join(directory, 'keys.json');
    await loadOrCreateSigningKeys(file);
    await chmod(file, 0o644);
    await expect(loadOrCreateSigningKeys(file)).rejects.toThrow(`signing key file ${file} is accessible to other users`);
  });

  it.each([
    ['not JSON', 'garbage'],
    ['no keys', '{"keys":[]}'],
    ['a public key only', '{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","x":"a","y":"b","kid":"k"}]}'],
    ['an RSA key', '{"keys":[{"kty":"RSA","alg":"RS256","d":"a","n":"b","e":"AQAB","kid":"k"}]}'],
  ])('refuses a file holding %s, naming the file', async (_name, content) => {
    const file = join(directory, 'keys.json');
    await writeFile(file, content, { mode: 0o600 });
    await expect(loadOrCreateSigningKeys(file)).rejects.toThrow(`signing key file ${file} does not hold one ES256 private JWK`);
  });
});

describe('defaultSigningKeysFile', () => {
  it('lives in the user cache directory', () => {
    expect(defaultSigningKeysFile('http://127.0.0.1:9000', { XDG_CACHE_HOME: '/home/u/.cache-x' })).toBe(
      '/home/u/.cache-x/mcp-auth-gateway/dev-auth-server-signing-keys-127.0.0.1-9000.json',
    );
    expect(defaultSigningKeysFile('http://127.0.0.1:9000', {})).toMatch(/\.cache\/mcp-auth-gateway\/dev-auth-server-signing-keys-127\.0\.0\.1-9000\.json$/);
  });

  it('one file per issuer (host and port): the gateway\'s and a vendor\'s development servers never share a key', () => {
    const env = { XDG_CACHE_HOME: '/c' };
    const files = ['http://127.0.0.1:9000', 'http://127.0.0.1:9100', 'http://localhost:9000', 'https://as.example.test', 'http://[::1]:9000'].map(
      (issuer) => defaultSigningKeysFile(issuer, env),
    );
    expect(new Set(files).size).toBe(files.length);
    expect(files.slice(3)).toEqual(['/c/mcp-auth-gateway/dev-auth-server-signing-keys-as.example.test-443.json', '/c/mcp-auth-gateway/dev-auth-server-signing-keys-___1_-9000.json']);
  });
});
