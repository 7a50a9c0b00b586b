import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_DIR_VARIABLE, findToken, readTokenStore, saveToken, type StoredToken } from '../../src/client/token-store.js';
import { runLogin } from '../helpers/login.js';
import { fixturePerTest, type Fixture } from './client-fixture.js';

/** `login` keeps refresh tokens, uses stored tokens again, and binds both to the authorization server that issued them. */

const fixture = fixturePerTest();
let env: NodeJS.ProcessEnv;
let storePath: string;

beforeEach(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-login-tokens-'));
  env = { [CONFIG_DIR_VARIABLE]: dir };
  storePath = join(dir, 'tokens.json');
});

async function storedFor(deployment: Fixture, issuer = deployment.issuer): Promise<StoredToken | undefined> {
  return findToken(await readTokenStore(storePath), issuer, deployment.resource);
}

/** Rewrites the stored token of `deployment` (time passing, a token revoked elsewhere). */
async function changeStored(deployment: Fixture, change: Partial<StoredToken>): Promise<StoredToken> {
  const stored = await storedFor(deployment);
  if (stored === undefined) throw new Error('nothing stored');
  await saveToken(storePath, { ...stored, ...change });
  return stored;
}

const signIns = (deployment: Fixture) => deployment.requests.filter((request) => request.endsWith('/authorize')).length;
const EXPIRED = '2020-01-01T00:00:00.000Z';

describe('login uses the token it stored', () => {
  it('a second run sends the stored token: no sign-in, no registration', async () => {
    const deployment = await fixture('clean');
    expect((await runLogin([deployment.url.href], env)).code).toBe(0);
    const first = await storedFor(deployment);
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(code).toBe(0);
    expect(stderr).toMatch(new RegExp(`using the stored token for ${deployment.resource} \\(expires in \\d+ s\\)`));
    expect(stderr).not.toContain('Sign in at:');
    expect(signIns(deployment)).toBe(1);
    expect(deployment.requests.filter((request) => request.endsWith('/register'))).toHaveLength(1);
    expect(deployment.presented.at(-1)).toBe(first?.accessToken);
  });

  it('an expired one is refreshed: no sign-in; the new refresh token replaces the old, which the server no longer takes', async () => {
    const deployment = await fixture('clean');
    expect((await runLogin([deployment.url.href], env)).code).toBe(0);
    const before = await changeStored(deployment, { expiresAt: EXPIRED });
    const sentBefore = deployment.presented.length;
    const { code, stderr, stdout } = await runLogin([deployment.url.href], env);
    expect(code).toBe(0);
    expect(stderr).toContain(`the stored token for ${deployment.resource} has expired`);
    expect(stderr).toContain('refreshed: scope "mcp:tools", expires in 300 s');
    expect(signIns(deployment)).toBe(1);
    const after = await storedFor(deployment);
    expect(after?.refreshToken).toBeDefined();
    expect(after?.refreshToken).not.toBe(before.refreshToken);
    expect(deployment.liveRefreshTokens).toEqual(new Set([after?.refreshToken]));
    // In this run the expired token was never sent; the refreshed one was.
    expect(deployment.presented.slice(sentBefore)).not.toContain(before.accessToken);
    expect(deployment.presented.at(-1)).toBe(after?.accessToken);
    for (const output of [stderr, stdout]) {
      expect(output).not.toContain(String(before.refreshToken));
      expect(output).not.toContain(String(after?.refreshToken));
    }
  });

  it('a stored token the server refuses (401) is refreshed once, then used', async () => {
    const deployment = await fixture('clean');
    expect((await runLogin([deployment.url.href], env)).code).toBe(0);
    await changeStored(deployment, { accessToken: 'revoked-elsewhere' });
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(code).toBe(0);
    expect(stderr).toContain('initialize: 401 with a token, discovery again');
    expect(stderr).toContain('refreshed: ');
    expect(signIns(deployment)).toBe(1);
    expect(deployment.presented.filter((token) => token === 'revoked-elsewhere')).toHaveLength(1);
  });

  it('a refresh token the server refuses is forgotten and the user signs in again', async () => {
    const deployment = await fixture('clean');
    expect((await runLogin([deployment.url.href], env)).code).toBe(0);
    await changeStored(deployment, { expiresAt: EXPIRED, refreshToken: 'dead-refresh-token' });
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(code).toBe(0);
    expect(stderr).toContain('refresh refused (invalid_grant): signing in again');
    expect(signIns(deployment)).toBe(2);
    expect((await storedFor(deployment))?.refreshToken).not.toBe('dead-refresh-token');
  });

  it('a server that does not rotate: the refresh token it did not replace is kept (RFC 6749 §6)', async () => {
    const deployment = await fixture('refresh-without-rotation');
    expect((await runLogin([deployment.url.href], env)).code).toBe(0);
    const before = await changeStored(deployment, { expiresAt: EXPIRED });
    expect((await runLogin([deployment.url.href], env)).code).toBe(0);
    const after = await storedFor(deployment);
    expect(after?.refreshToken).toBe(before.refreshToken);
    expect(after?.accessToken).not.toBe(before.accessToken);
  });
});

describe('tokens are bound to the authorization server that issued them', () => {
  it("a token stored for the same resource from another authorization server is never sent, nor its refresh token", async () => {
    const deployment = await fixture('clean');
    const foreign: StoredToken = {
      resource: deployment.resource,
      authorizationServer: 'https://old-as.example.com',
      clientId: 'old-client',
      accessToken: 'OLD-SERVER-ACCESS-TOKEN',
      refreshToken: 'OLD-SERVER-REFRESH-TOKEN',
      tokenType: 'Bearer',
      obtainedAt: new Date().toISOString(),
    };
    await saveToken(storePath, foreign);
    const { code } = await runLogin([deployment.url.href], env);
    expect(code).toBe(0);
    expect(deployment.presented).not.toContain(foreign.accessToken);
    expect(signIns(deployment)).toBe(1);
    const store = await readTokenStore(storePath);
    expect(findToken(store, 'https://old-as.example.com', deployment.resource)?.accessToken).toBe(foreign.accessToken);
    expect(findToken(store, deployment.issuer, deployment.resource)?.accessToken).toBe(deployment.presented.at(-1));
  });

  it('a version 1 store (keyed by resource only) still works: its token is used for the server it names, not for another', async () => {
    const deployment = await fixture('clean');
    expect((await runLogin([deployment.url.href], env)).code).toBe(0);
    const current = await storedFor(deployment);
    const other = { ...current, resource: `${deployment.url.origin}/other/mcp`, authorizationServer: 'https://old-as.example.com', accessToken: 'OTHER' };
    await writeFile(storePath, JSON.stringify({ version: 1, tokens: { [deployment.resource]: current, [other.resource]: other } }), { mode: 0o600 });
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(code).toBe(0);
    expect(stderr).toContain('using the stored token');
    expect(signIns(deployment)).toBe(1);
    const file = JSON.parse(await readFile(storePath, 'utf8')) as { version: number };
    expect(file.version).toBe(1);
  });

  it('the resource moving to another authorization server mid-session: registration and sign-in there, no client or token of the first one presented', async () => {
    const deployment = await fixture('as-migration');
    const { code, stderr } = await runLogin([deployment.url.href, '--call-tool', 'add', '--tool-arguments', '{"a":2,"b":3}'], env);
    expect(stderr).toContain(`authorization server is now ${deployment.url.origin}/as2 (was ${deployment.url.origin}/as): its own client and tokens are used from here`);
    expect(stderr).toContain('tools/call add: ok');
    expect(code).toBe(0);
    expect(deployment.requests).toEqual(expect.arrayContaining(['POST /as/register', 'POST /as2/register', 'GET /as2/authorize', 'POST /as2/token']));
    expect(deployment.requests.filter((request) => request.startsWith('foreign client'))).toEqual([]);
    const store = await readTokenStore(storePath);
    expect(findToken(store, `${deployment.url.origin}/as2`, deployment.resource)?.accessToken).toBe(deployment.presented.at(-1));
  });
});
