import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { IdentityAsserter } from '../decision/index.js';
import type { IdentitySettings } from '../config/types.js';
import type { SigningKey } from './signing-key.js';

/** Explicit JWT type (RFC 8725 §3.11): an identity assertion is never mistaken for an access token. */
export const IDENTITY_ASSERTION_TYP = 'mcp-identity+jwt';

export interface IdentityAsserterOptions {
  /** `iss`: the gateway's public URL. */
  readonly issuer: string;
  readonly key: SigningKey;
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

/**
 * Short-lived ES256 JWTs telling the upstream who calls: iss = gateway, aud = upstream, sub, client_id, scope,
 * iat, exp (never after the caller's token), jti. Verifiable with the gateway's JWKS at /.well-known/jwks.json.
 */
export function createIdentityAsserter(settings: IdentitySettings, options: IdentityAsserterOptions): IdentityAsserter {
  const now = options.now ?? Date.now;
  const { key } = options;
  return {
    header: settings.header,
    assert(auth, scopes) {
      const issuedAt = Math.floor(now() / 1000);
      const expires = Math.min(issuedAt + Math.floor(settings.ttl / 1000), Math.floor(auth.expiresAt / 1000));
      const claims = {
        ...(auth.clientId === undefined ? {} : { client_id: auth.clientId }),
        scope: [...scopes].sort().join(' '),
      };
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: IDENTITY_ASSERTION_TYP })
        .setIssuer(options.issuer)
        .setAudience(settings.audience)
        .setIssuedAt(issuedAt)
        .setExpirationTime(expires)
        .setJti(randomUUID());
      if (auth.subject !== undefined) jwt.setSubject(auth.subject);
      return jwt.sign(key.privateKey);
    },
  };
}
