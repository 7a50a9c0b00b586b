import { performance } from 'node:perf_hooks';
import type { RouteVerifier, TokenKind } from '../auth/route-verifier.js';
import type { AuthContext, TokenVerifier } from '../decision/index.js';
import type { CompiledRoute } from '../config/types.js';
import { isGatewayError } from '../decision/index.js';
import type { VerifierFactory } from './runtime.js';
import type { AuthDecisionResult, GatewayMetrics } from '../observability/metrics.js';

type ObserveDecision = (result: AuthDecisionResult, seconds: number) => void;

function resultOf(error: unknown): AuthDecisionResult {
  return isGatewayError(error) && error.code === 'invalid_token' ? 'invalid_token' : 'auth_unavailable';
}

function secondsSince(startedAt: number, now: () => number): number {
  return (now() - startedAt) / 1000;
}

/**
 * `inner` with every decision's outcome and duration reported to `observe` (a store: the histogram takes its
 * observations in batches); a verdict at hand stays at hand.
 */
function timedVerifier(inner: TokenVerifier, observe: ObserveDecision, now: () => number): TokenVerifier {
  return {
    verify(token, request) {
      const startedAt = now();
      const verdict = inner.verify(token, request);
      if (!(verdict instanceof Promise)) {
        observe('accepted', secondsSince(startedAt, now));
        return verdict;
      }
      return verdict.then(
        (context: AuthContext) => {
          observe('accepted', secondsSince(startedAt, now));
          return context;
        },
        (error: unknown) => {
          observe(resultOf(error), secondsSince(startedAt, now));
          throw error;
        },
      );
    },
    isReady: () => inner.isReady(),
    warm: () => inner.warm(),
    close: () => inner.close(),
  };
}

/**
 * Wraps every verifier the factory makes so each decision lands in `auth_decision_seconds`, labelled with the kind
 * of verifier that decided. Each inner verifier is timed behind the route verifier's own dispatch, so no token is
 * decoded twice to find its kind.
 */
export function timedVerifiers(
  verifierFor: (route: CompiledRoute) => RouteVerifier,
  metrics: Pick<GatewayMetrics, 'authDecision'>,
  now: () => number = () => performance.now(),
): VerifierFactory {
  return (route) => {
    const verifier = verifierFor(route);
    const timed = (kind: TokenKind, inner: TokenVerifier) =>
      timedVerifier(inner, (result, seconds) => metrics.authDecision(route.name, kind, result, seconds), now);
    return verifier.wrapInner(timed);
  };
}
