import { describe, expect, it } from 'vitest';
import { dispatchingVerifier } from '../../../src/auth/route-verifier.js';
import type { AuthContext, TokenVerifier } from '../../../src/decision/ports.js';
import type { CompiledRoute } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/decision/refusal.js';
import type { AuthDecisionKind, AuthDecisionResult } from '../../../src/observability/metrics.js';
import { timedVerifiers } from '../../../src/gateway/verifier-timing.js';

const ISSUER = 'https://i.example.test';
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const JWT_FROM_ISSUER = `${b64({ alg: 'ES256' })}.${b64({ iss: ISSUER })}.sig`;

/** Only what timedVerifiers reads of a route. */
function route(tokens: { jwt?: true; introspection?: true }): CompiledRoute {
  return {
    name: 'calc',
    tokens: { jwt: tokens.jwt && { issuer: ISSUER }, introspection: tokens.introspection && {} },
  } as unknown as CompiledRoute;
}

/** Answers by the token's text: `invalid…` → invalid_token, `down…` → auth_unavailable, `boom…` → a plain Error. */
function fake(kind: AuthContext['tokenKind']): TokenVerifier {
  return {
    verify(token) {
      if (token.startsWith('invalid')) return Promise.reject(new GatewayError('invalid_token'));
      if (token.startsWith('down')) return Promise.reject(new GatewayError('auth_unavailable'));
      if (token.startsWith('boom')) return Promise.reject(new Error('unexpected'));
      return Promise.resolve({
        issuer: ISSUER,
        subject: 'alice',
        clientId: undefined,
        scopes: new Set<string>(),
        audience: [],
        expiresAt: 0,
        tokenKind: kind,
      });
    },
    isReady: () => true,
    warm: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

type Decision = [route: string, kind: AuthDecisionKind, result: AuthDecisionResult, seconds: number];

/** A clock that advances 250 ms per reading, so every decision takes 0.25 s. */
function recorder() {
  const decisions: Decision[] = [];
  let time = 0;
  const metrics = { authDecision: (...decision: Decision) => void decisions.push(decision) };
  const now = () => (time += 250);
  return { decisions, metrics, now };
}

describe('timedVerifiers', () => {
  it('labels each decision of a route verifier with the inner verifier that made it', async () => {
    const { decisions, metrics, now } = recorder();
    const verifierFor = timedVerifiers(
      () => dispatchingVerifier({ jwt: fake('jwt'), introspection: fake('introspection') }, ISSUER),
      metrics,
      now,
    );
    const verifier = verifierFor(route({ jwt: true, introspection: true }));
    await verifier.verify(JWT_FROM_ISSUER);
    await verifier.verify('opaque-token');
    await expect(verifier.verify('invalid-opaque')).rejects.toThrow();
    await expect(verifier.verify('down-opaque')).rejects.toThrow();
    await expect(verifier.verify('boom-opaque')).rejects.toThrow('unexpected');
    expect(decisions).toEqual([
      ['calc', 'jwt', 'accepted', 0.25],
      ['calc', 'introspection', 'accepted', 0.25],
      ['calc', 'introspection', 'invalid_token', 0.25],
      ['calc', 'introspection', 'auth_unavailable', 0.25],
      ['calc', 'introspection', 'auth_unavailable', 0.25],
    ]);
  });

  it('a verdict the inner verifier gives at once (a cached token) stays at once, and is observed at once', () => {
    const { decisions, metrics, now } = recorder();
    const context = { issuer: ISSUER, subject: 'alice', clientId: undefined, scopes: new Set<string>(), audience: [], expiresAt: 0, tokenKind: 'jwt' as const };
    const cached: TokenVerifier = { ...fake('jwt'), verify: () => context };
    const verifier = timedVerifiers(() => dispatchingVerifier({ jwt: cached }, ISSUER), metrics, now)(route({ jwt: true }));
    expect(verifier.verify(JWT_FROM_ISSUER)).toBe(context);
    expect(decisions).toEqual([['calc', 'jwt', 'accepted', 0.25]]);
  });

  it('passes the context through and keeps readiness, warm-up and close', async () => {
    const { metrics, now } = recorder();
    let closed = false;
    const inner: TokenVerifier = { ...fake('jwt'), isReady: () => false, close: () => Promise.resolve(void (closed = true)) };
    const requests: unknown[] = [];
    const recording: TokenVerifier = { ...inner, verify: (token, request) => (requests.push(request), inner.verify(token)) };
    const verifier = timedVerifiers(() => dispatchingVerifier({ jwt: recording }, ISSUER), metrics, now)(route({ jwt: true }));
    await expect(verifier.verify(JWT_FROM_ISSUER, { clientAddress: '192.0.2.7' })).resolves.toMatchObject({ tokenKind: 'jwt', subject: 'alice' });
    // K11: the client address reaches the inner verifier through the timing wrapper and the dispatch.
    expect(requests).toEqual([{ clientAddress: '192.0.2.7' }]);
    expect(verifier.isReady()).toBe(false);
    await verifier.close();
    expect(closed).toBe(true);
  });
});
