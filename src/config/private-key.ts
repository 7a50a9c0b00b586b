import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';

/** JWS algorithms the gateway signs with, chosen from the key: one algorithm per key type. */
export type SigningAlgorithm = 'ES256' | 'ES384' | 'ES512' | 'RS256' | 'PS256' | 'EdDSA';

/**
 * A private key written as a JWK (JSON object with `d`) or PEM (PKCS#8, SEC1 or PKCS#1). `undefined` when the text
 * is neither; the text itself never reaches an error message.
 */
export function parsePrivateKey(text: string): KeyObject | undefined {
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith('{')) {
      const jwk = JSON.parse(trimmed) as unknown;
      if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return undefined;
      return createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
    }
    if (trimmed.startsWith('-----BEGIN')) return createPrivateKey({ key: trimmed, format: 'pem' });
  } catch {
    return undefined;
  }
  return undefined;
}

const CURVE_ALGORITHMS: Readonly<Record<string, SigningAlgorithm>> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
};

/** The algorithm a key signs with; `undefined` for key types the gateway does not sign with (X25519, DSA, ...). */
export function signingAlgorithmOf(key: KeyObject): SigningAlgorithm | undefined {
  switch (key.asymmetricKeyType) {
    case 'ec':
      return CURVE_ALGORITHMS[key.asymmetricKeyDetails?.namedCurve ?? ''];
    case 'rsa':
      return (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048 ? 'RS256' : undefined;
    case 'rsa-pss':
      return (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048 ? 'PS256' : undefined;
    case 'ed25519':
      return 'EdDSA';
    default:
      return undefined;
  }
}

/** Why `text` is not a usable signing key (any supported algorithm unless `only` narrows it), or `undefined`. */
export function privateKeyProblem(text: string, only?: SigningAlgorithm): string | undefined {
  const key = parsePrivateKey(text);
  if (!key) return 'must be a private key: a JWK (JSON with "d") or a PEM block';
  const algorithm = signingAlgorithmOf(key);
  if (only !== undefined) return algorithm === only ? undefined : `must be a ${only} key (EC P-256)`;
  return algorithm === undefined
    ? 'must be an EC (P-256, P-384, P-521), RSA (2048 bits or more) or Ed25519 private key'
    : undefined;
}

/** The `kid` of a JWK-written key, so client assertions name the key the authorization server registered. */
export function keyIdOf(text: string): string | undefined {
  try {
    const jwk = JSON.parse(text) as { kid?: unknown };
    return typeof jwk.kid === 'string' && jwk.kid !== '' ? jwk.kid : undefined;
  } catch {
    return undefined;
  }
}
