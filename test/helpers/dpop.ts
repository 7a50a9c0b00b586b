import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { accessTokenHash } from '../../src/auth/dpop-proof.js';

/** What one proof says; every claim defaults to a valid value for `method` and `htu`. */
export interface ProofClaims {
  readonly htm: string;
  readonly htu: string;
  /** The access token `ath` hashes; `ath` itself overrides it. */
  readonly accessToken?: string;
  readonly ath?: string | undefined;
  readonly iat?: number;
  readonly jti?: string;
  readonly nonce?: string;
  /** Extra or replaced claims (undefined removes one). */
  readonly claims?: JWTPayload;
  /** Replaces the header (`typ`, `alg`, `jwk`). */
  readonly header?: Record<string, unknown>;
}

/** A client's DPoP key: its public JWK, RFC 7638 thumbprint (`cnf.jkt`), and proofs signed by it. */
export interface DpopKey {
  readonly publicJwk: JWK;
  readonly privateJwk: JWK;
  readonly jkt: string;
  readonly alg: string;
  proof(claims: ProofClaims): Promise<string>;
}

export async function createDpopKey(alg = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const privateJwk = await exportJWK(privateKey);
  return {
    publicJwk,
    privateJwk,
    jkt: await calculateJwkThumbprint(publicJwk, 'sha256'),
    alg,
    proof: (claims) => signProof(privateKey, { typ: 'dpop+jwt', alg, jwk: publicJwk, ...claims.header }, claims),
  };
}

/** Signs a proof with `key` whatever the header says (a proof whose header names another key than the signer). */
export function signProof(key: CryptoKey | Uint8Array, header: Record<string, unknown>, claims: ProofClaims): Promise<string> {
  const payload: JWTPayload = {
    jti: claims.jti ?? randomUUID(),
    htm: claims.htm,
    htu: claims.htu,
    iat: claims.iat ?? Math.floor(Date.now() / 1000),
    ...('ath' in claims ? (claims.ath === undefined ? {} : { ath: claims.ath }) : claims.accessToken === undefined ? {} : { ath: accessTokenHash(claims.accessToken) }),
    ...(claims.nonce === undefined ? {} : { nonce: claims.nonce }),
    ...claims.claims,
  };
  return new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(key);
}
