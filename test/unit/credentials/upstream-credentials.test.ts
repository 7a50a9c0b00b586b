import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/decision/ports.js';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import { Secret } from '../../../src/config/secret.js';
import type { OAuthCredentialDeps } from '../../../src/credentials/oauth-credentials.js';
import { createUpstreamCredentialProvider, type GatewayCredential } from '../../../src/credentials/upstream-credentials.js';

const SECRET_VALUE = 'upstream-secret-canary';
const CALLER_TOKEN = 'caller-token-canary';
const deps: OAuthCredentialDeps = { store: createMemoryStore(), keySecret: randomBytes(32) };

const auth: AuthContext = {
  issuer: 'https://as.example.com',
  subject: 'alice',
  clientId: 'client-1',
  scopes: new Set(['mcp:tools']),
  audience: ['https://gw.example.com/calc/mcp'],
  expiresAt: 0,
  tokenKind: 'jwt',
};

describe('createUpstreamCredentialProvider', () => {
  it.each<[string, GatewayCredential, Record<string, string>]>([
    ['none', { type: 'none' }, {}],
    ['bearer', { type: 'bearer', token: new Secret(SECRET_VALUE) }, { authorization: `Bearer ${SECRET_VALUE}` }],
    ['header (name lowercased)', { type: 'header', name: 'X-Upstream-Key', value: new Secret(SECRET_VALUE) }, { 'x-upstream-key': SECRET_VALUE }],
  ])('F1 %s → the configured credential, at once', (_name, upstreamAuth, expected) => {
    const provider = createUpstreamCredentialProvider(upstreamAuth, deps);
    expect(provider.headersFor(auth, CALLER_TOKEN)).toStrictEqual(expected);
  });

  it.each<[string, GatewayCredential]>([
    ['bearer', { type: 'bearer', token: new Secret(SECRET_VALUE) }],
    ['header', { type: 'header', name: 'x-upstream-key', value: new Secret(SECRET_VALUE) }],
  ])('H1 the %s provider does not print its secret (JSON, inspect)', (_name, upstreamAuth) => {
    const provider = createUpstreamCredentialProvider(upstreamAuth, deps);
    for (const printed of [JSON.stringify(provider), inspect(provider, { depth: 10, showHidden: true })]) {
      expect(printed).not.toContain(SECRET_VALUE);
    }
  });

  it('returned headers are frozen: a caller cannot alter the credential for the next request', async () => {
    const provider = createUpstreamCredentialProvider({ type: 'bearer', token: new Secret(SECRET_VALUE) }, deps);
    const headers = await provider.headersFor(auth, CALLER_TOKEN);
    expect(Object.isFrozen(headers)).toBe(true);
  });

  it('F7 a provider built from a rotated secret serves the new value', () => {
    const before = createUpstreamCredentialProvider({ type: 'bearer', token: new Secret('old') }, deps);
    const after = createUpstreamCredentialProvider({ type: 'bearer', token: new Secret('new') }, deps);
    expect(before.headersFor(auth, CALLER_TOKEN)).toEqual({ authorization: 'Bearer old' });
    expect(after.headersFor(auth, CALLER_TOKEN)).toEqual({ authorization: 'Bearer new' });
  });

  it('rejects an auth type it does not know (config drift) at creation', () => {
    expect(() => createUpstreamCredentialProvider({ type: 'kerberos' } as unknown as GatewayCredential, deps)).toThrow(
      'unsupported upstream auth type: kerberos',
    );
  });
});
