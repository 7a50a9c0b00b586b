import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { keyIdOf, parsePrivateKey, signingAlgorithmOf } from '../config/private-key.js';
import type { Secret } from '../config/secret.js';

/** The gateway's own signing key for identity assertions, and what the JWKS publishes of it. */
export interface SigningKey {
  readonly alg: 'ES256';
  readonly kid: string;
  readonly privateKey: KeyObject;
  /** Public members only (`kty`, `crv`, `x`, `y`) plus `kid`, `alg`, `use`. */
  readonly publicJwk: JWK;
}

/** Picks the key for a compiled config: the configured one, else the one generated for this process. */
export type SigningKeySource = (configured: Secret | undefined) => SigningKey;

function fromPrivateKey(privateKey: KeyObject, kid: string | undefined): SigningKey {
  if (signingAlgorithmOf(privateKey) !== 'ES256') throw new Error('signing_key must be an EC P-256 key');
  const { kty, crv, x, y } = createPublicKey(privateKey).export({ format: 'jwk' });
  if (typeof kty !== 'string' || typeof crv !== 'string' || typeof x !== 'string' || typeof y !== 'string') {
    throw new Error('signing_key has no exportable public key');
  }
  // RFC 7638 thumbprint: the required members in lexicographic order, no whitespace.
  const thumbprint = createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
  const keyId = kid ?? thumbprint;
  return { alg: 'ES256', kid: keyId, privateKey, publicJwk: { kty, crv, x, y, kid: keyId, alg: 'ES256', use: 'sig' } };
}

/** The configured key (validated at load; a failure here is a programming error and names no key material). */
export function signingKeyFrom(secret: Secret): SigningKey {
  const text = secret.reveal();
  const privateKey = parsePrivateKey(text);
  if (!privateKey) throw new Error('signing_key is not a private key');
  return fromPrivateKey(privateKey, keyIdOf(text));
}

export function generateSigningKey(): SigningKey {
  return fromPrivateKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, undefined);
}

/**
 * One generated key per source (per process in production), kept across config reloads so upstreams that cached
 * the JWKS keep verifying; a configured key always wins.
 */
export function createSigningKeySource(): SigningKeySource {
  let generated: SigningKey | undefined;
  return (configured) => (configured ? signingKeyFrom(configured) : (generated ??= generateSigningKey()));
}
