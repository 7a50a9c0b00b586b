import { createHmac } from 'node:crypto';
import type { AsymmetricSigningAlgorithm } from 'oidc-provider';
import { DPOP_ALGORITHMS, type DpopAlgorithm } from '../config/sections/routes/dpop.js';
import type { CompiledRoute } from '../config/types.js';

/**
 * The proof algorithms the gateway's authorization server takes at its token endpoint (and advertises as
 * `dpop_signing_alg_values_supported`): those of its routes that take DPoP tokens, in the allow-list's order.
 * Empty when every route is `bearer_only`: the server then ignores proofs and issues Bearer tokens (RFC 9449 §5),
 * since a bound token would be refused at every route.
 */
export function dpopSigningAlgorithms(routes: readonly Pick<CompiledRoute, 'dpop'>[]): AsymmetricSigningAlgorithm[] {
  const taken = new Set<DpopAlgorithm>(routes.filter((route) => route.dpop.mode !== 'bearer_only').flatMap((route) => route.dpop.algorithms));
  return DPOP_ALGORITHMS.filter((algorithm) => taken.has(algorithm));
}

/**
 * oidc-provider's server nonces (RFC 9449 §8) are stateless: a digest of a secret and the minute. Derived from
 * `cache.key_secret`, the secret is the same on every replica, so a nonce one replica gives is taken by all.
 */
export function dpopNonceSecret(keySecret: Buffer): Buffer {
  return createHmac('sha256', keySecret).update('mcp-auth-gateway authorization server DPoP nonces').digest();
}
