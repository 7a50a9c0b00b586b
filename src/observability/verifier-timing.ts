import { performance } from 'node:perf_hooks';
import { isJwtFrom } from '../auth/route-verifier.js';
import type { TokenVerifier } from '../auth/types.js';
import type { CompiledRoute } from '../config/types.js';
import { isGatewayError } from '../errors.js';
import type { VerifierFactory } from '../runtime.js';
import type { AuthDecisionKind, AuthDecisionResult, GatewayMetrics } from './metrics.js';

/** Which verifier decides a token on `route`: the same dispatch route-verifier.ts makes. */
function decisionKind(route: CompiledRoute, token: string): AuthDecisionKind {
  const { jwt, introspection } = route.tokens;
  if (!jwt) return 'introspection';
  return !introspection || isJwtFrom(token, jwt.issuer) ? 'jwt' : 'introspection';
}

function resultOf(error: unknown): AuthDecisionResult {
  return isGatewayError(error) && error.code === 'invalid_token' ? 'invalid_token' : 'auth_unavailable';
}

/** Wraps every verifier the factory makes so each decision lands in `auth_decision_seconds`. */
export function timedVerifiers(
  verifierFor: VerifierFactory,
  metrics: Pick<GatewayMetrics, 'authDecision'>,
  now: () => number = () => performance.now(),
): VerifierFactory {
  return (route) => {
    const inner = verifierFor(route);
    const timed: TokenVerifier = {
      async verify(token) {
        const kind = decisionKind(route, token);
        const startedAt = now();
        const observe = (result: AuthDecisionResult) => metrics.authDecision(route.name, kind, result, (now() - startedAt) / 1000);
        try {
          const context = await inner.verify(token);
          observe('accepted');
          return context;
        } catch (error) {
          observe(resultOf(error));
          throw error;
        }
      },
      isReady: () => inner.isReady(),
      warm: () => inner.warm(),
      close: () => inner.close(),
    };
    return timed;
  };
}
