import { describe, expect, it } from 'vitest';
import { dispatchingVerifier, type TokenKind } from '../../../src/auth/route-verifier.js';
import type { AuthContext, TokenVerifier } from '../../../src/decision/ports.js';

const ISSUER = 'https://i.example.test';
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const JWT_FROM_ISSUER = `${b64({ alg: 'ES256' })}.${b64({ iss: ISSUER })}.sig`;
const OPAQUE = 'opaque-0123456789';

/** A verifier that accepts everything as `kind` and records what it saw. */
function fake(kind: TokenKind): TokenVerifier & { readonly seen: string[]; closed: boolean } {
  const seen: string[] = [];
  const verifier = {
    seen,
    closed: false,
    verify(token: string): Promise<AuthContext> {
      seen.push(token);
      const context: AuthContext = {
        issuer: ISSUER,
        subject: 'alice',
        clientId: undefined,
        scopes: new Set(),
        audience: [],
        expiresAt: 0,
        tokenKind: kind,
      };
      return Promise.resolve(context);
    },
    isReady: () => true,
    warm: () => Promise.resolve(),
    close() {
      verifier.closed = true;
      return Promise.resolve();
    },
  };
  return verifier;
}

describe('dispatchingVerifier', () => {
  it('with both kinds, a JWS from the jwt issuer goes to the JWT verifier and anything else to introspection', async () => {
    const jwt = fake('jwt');
    const introspection = fake('introspection');
    const verifier = dispatchingVerifier({ jwt, introspection }, ISSUER);
    await verifier.verify(JWT_FROM_ISSUER);
    await verifier.verify(OPAQUE);
    await verifier.verify(`${b64({ alg: 'ES256' })}.${b64({ iss: 'https://other.example.test' })}.sig`);
    expect(jwt.seen).toEqual([JWT_FROM_ISSUER]);
    expect(introspection.seen).toHaveLength(2);
  });

  it.each<TokenKind>(['jwt', 'introspection'])('with only %s, every token goes to it', async (kind) => {
    const only = fake(kind);
    const verifier = dispatchingVerifier({ [kind]: only }, kind === 'jwt' ? ISSUER : undefined);
    await verifier.verify(JWT_FROM_ISSUER);
    await verifier.verify(OPAQUE);
    expect(only.seen).toEqual([JWT_FROM_ISSUER, OPAQUE]);
  });

  it('refuses to be built without any inner verifier', () => {
    expect(() => dispatchingVerifier({}, ISSUER)).toThrow(/jwt or an introspection/);
  });

  it('wrapInner decorates each inner verifier once, with its kind, and keeps the dispatch', async () => {
    const jwt = fake('jwt');
    const introspection = fake('introspection');
    const wrapped: TokenKind[] = [];
    const routed: TokenKind[] = [];
    const verifier = dispatchingVerifier({ jwt, introspection }, ISSUER).wrapInner((kind, inner) => {
      wrapped.push(kind);
      return { ...inner, verify: (token) => (routed.push(kind), inner.verify(token)) };
    });
    expect(wrapped).toEqual(['jwt', 'introspection']);
    await verifier.verify(OPAQUE);
    await verifier.verify(JWT_FROM_ISSUER);
    expect(routed).toEqual(['introspection', 'jwt']);
    expect(jwt.seen).toEqual([JWT_FROM_ISSUER]);
    expect(introspection.seen).toEqual([OPAQUE]);
    await verifier.close();
    expect([jwt.closed, introspection.closed]).toEqual([true, true]);
  });
});
