import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { keyIdOf, parsePrivateKey, signingAlgorithmOf } from '../config/private-key.js';
import type { Secret } from '../config/secret.js';

/** RFC 7523 §2.2: the `client_assertion_type` of a JWT client assertion. */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

const CLIENT_ASSERTION_LIFETIME_S = 60;

export interface ClientAssertionOptions {
  /** JWK or PEM text, validated at config load. */
  readonly privateKey: Secret;
  /** `iss` and `sub` (RFC 7523 §3). */
  readonly clientId: string;
  /** `aud`: the endpoint the assertion is sent to (a token or introspection endpoint URL). */
  readonly audience: string;
  /** Clock in ms since the epoch. */
  readonly now: () => number;
}

/**
 * private_key_jwt client authentication (RFC 7523 §2.2, §3): a fresh, short-lived assertion per request signed
 * with the configured key (its `kid` named when the JWK has one), with a unique `jti` so servers that refuse
 * replays accept each. Throws at creation for a key that cannot sign: config validation refuses those, so it is a
 * programming error, and the message names no key material.
 */
export function createClientAssertionSigner(options: ClientAssertionOptions): () => Promise<string> {
  const text = options.privateKey.reveal();
  const key = parsePrivateKey(text);
  const alg = key && signingAlgorithmOf(key);
  if (!key || !alg) throw new Error('private_key is not a usable signing key');
  const kid = keyIdOf(text);
  return () => {
    const issuedAt = Math.floor(options.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg, typ: 'JWT', ...(kid === undefined ? {} : { kid }) })
      .setIssuer(options.clientId)
      .setSubject(options.clientId)
      .setAudience(options.audience)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + CLIENT_ASSERTION_LIFETIME_S)
      .setJti(randomUUID())
      .sign(key);
  };
}
