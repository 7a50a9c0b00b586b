import type { CacheStore } from '../cache/store.js';
import { dpopProofKey, keyedDigest } from '../cache/cache-keys.js';
import type { CompiledRoute } from '../config/types.js';
import { GatewayError, pathOf } from '../decision/index.js';
import type { DpopProofChecker, DpopRequest } from '../decision/index.js';
import { htuOf, verifyDpopProof } from './dpop-proof.js';

export interface DpopCheckerServices {
  /** The replay cache: Redis when configured, so every replica refuses a proof any of them has seen. */
  readonly store: CacheStore;
  /** HMAC key of cache keys and server nonces (the same on every replica sharing Redis). */
  readonly keySecret: Buffer;
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: (() => number) | undefined;
}

/** A server nonce: 128 bits of a keyed digest. */
const NONCE_LENGTH = 22;

/**
 * The DPoP checks of one route (`routes[].dpop`): the proof itself (dpop-proof.ts), then the server nonce when the
 * route requires one, then the jti, remembered in the store for twice the iat window, so a proof is accepted once
 * on all replicas together (RFC 9449 §11.1). Nonces need no state (the MCP DPoP extension's stateless nonce): the
 * nonce of a period is a keyed digest of the route and the period's number, the same on every replica; the current
 * period's and the one before are accepted.
 */
export function createDpopChecker(route: Pick<CompiledRoute, 'name' | 'resource' | 'dpop'>, services: DpopCheckerServices): DpopProofChecker {
  const now = services.now ?? Date.now;
  const settings = route.dpop;
  const resource = new URL(route.resource);
  const canonicalUri = htuOf(route.resource);
  const replayTtl = 2 * settings.iatWindow + 1_000;

  function nonceOf(period: number): string {
    return keyedDigest(services.keySecret, ['dpop-nonce', route.name, String(period)]).slice(0, NONCE_LENGTH);
  }
  const currentPeriod = (): number => Math.floor(now() / settings.nonceLifetime);

  /** The canonical resource URI, and the URI as the client addressed it (its Host and path). */
  function urisOf(request: DpopRequest): string[] {
    const uris = canonicalUri === undefined ? [] : [canonicalUri];
    const asSent = request.host === undefined ? undefined : htuOf(`${resource.protocol}//${request.host}${pathOf(request.url)}`);
    if (asSent !== undefined && asSent !== canonicalUri) uris.push(asSent);
    return uris;
  }

  return {
    async check(request) {
      const proof = await verifyDpopProof(request.proof, {
        method: request.method,
        uris: urisOf(request),
        accessToken: request.accessToken,
        boundKey: request.boundKey,
        algorithms: settings.algorithms,
        iatWindow: settings.iatWindow,
        now: now(),
      });
      if (settings.requireNonce) {
        const period = currentPeriod();
        const current = nonceOf(period);
        if (proof.nonce !== current && proof.nonce !== nonceOf(period - 1)) {
          throw new GatewayError('use_dpop_nonce', { nonce: current, reason: proof.nonce === undefined ? 'nonce_missing' : 'nonce_stale' });
        }
      }
      if (await services.store.setIfAbsent(dpopProofKey(services.keySecret, request.boundKey, proof.jti), '1', replayTtl)) return;
      // A store that did not answer cannot tell a replay from a first use: fail closed, as an outage.
      if (services.store.status().state !== 'ready') throw new GatewayError('auth_unavailable', { reason: 'dpop_replay_cache_unavailable' });
      throw new GatewayError('invalid_dpop_proof', { reason: 'jti_replayed' });
    },
    currentNonce: () => (settings.requireNonce ? nonceOf(currentPeriod()) : undefined),
  };
}
