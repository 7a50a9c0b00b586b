import { z } from 'zod';
import type { Milliseconds } from '../../duration.js';
import { duration } from '../../fields.js';

/** `routes[].dpop`: sender-constrained access tokens (RFC 9449, the MCP DPoP extension SEP-1932). */

/**
 * - `bearer_only`: the `Bearer` scheme only; a token bound to a key (`cnf`) is refused (the behaviour before DPoP).
 * - `accepted`: unbound tokens as `Bearer`, `cnf.jkt`-bound tokens as `DPoP` with a proof (RFC 9449 §7.2).
 * - `required`: only `cnf.jkt`-bound tokens as `DPoP` with a proof; a `Bearer` credential counts as none.
 */
export const DPOP_MODES = ['bearer_only', 'accepted', 'required'] as const;
export type DpopMode = (typeof DPOP_MODES)[number];

/** Asymmetric JWS algorithms a proof may use (RFC 9449 §4.3 check 5: never `none` nor a MAC). */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519'] as const;
export type DpopAlgorithm = (typeof DPOP_ALGORITHMS)[number];

export const dpopSchema = z
  .strictObject({
    mode: z
      .enum(DPOP_MODES, { error: `must be one of ${DPOP_MODES.join(', ')}` })
      .default('bearer_only')
      .describe(
        'bearer_only: Bearer tokens only, a key-bound token is refused; accepted: Bearer tokens and cnf.jkt-bound tokens with a DPoP proof; required: only cnf.jkt-bound tokens with a DPoP proof. Default: bearer_only.',
      ),
    algorithms: z
      .array(z.enum(DPOP_ALGORITHMS, { error: `must be one of ${DPOP_ALGORITHMS.join(', ')} (HS* and none are never accepted)` }))
      .min(1)
      .default(['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'])
      .describe('Signature algorithms a DPoP proof may use, advertised in the DPoP challenge (`algs`), in the route metadata, and by authorization_server (the union over the routes that take DPoP). Default: [ES256, PS256, RS256, EdDSA, Ed25519].'),
    iat_window: duration('60s', "How far a proof's iat may be from the gateway's clock, either way (RFC 9449 §11.1); each proof's jti is remembered twice this long, across replicas through the cache.", {
      min: 1_000,
      max: 300_000,
    }),
    require_nonce: z
      .boolean()
      .default(false)
      .describe('Require a server nonce in every proof (RFC 9449 §9): a proof without the current one gets 401 use_dpop_nonce and a DPoP-Nonce header. Default: false.'),
    nonce_lifetime: duration('5m', 'How long one server nonce is current; the one before it is still accepted for as long again.', {
      min: 10_000,
      max: 3_600_000,
    }),
  })
  .prefault({})
  .describe('DPoP (RFC 9449): whether this route accepts or requires sender-constrained tokens, and how proofs are checked.');

export type RawDpop = z.output<typeof dpopSchema>;

export interface DpopSettings {
  readonly mode: DpopMode;
  readonly algorithms: readonly DpopAlgorithm[];
  readonly iatWindow: Milliseconds;
  readonly requireNonce: boolean;
  readonly nonceLifetime: Milliseconds;
}

export function compileDpop(raw: RawDpop): DpopSettings {
  return {
    mode: raw.mode,
    algorithms: raw.algorithms,
    iatWindow: raw.iat_window,
    requireNonce: raw.require_nonce,
    nonceLifetime: raw.nonce_lifetime,
  };
}

/** Whether a route takes the `Bearer` scheme and the `DPoP` scheme. */
export function acceptedSchemes(mode: DpopMode): { readonly bearer: boolean; readonly dpop: boolean } {
  return { bearer: mode !== 'required', dpop: mode !== 'bearer_only' };
}
