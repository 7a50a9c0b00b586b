import { hash } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, errors, jwtVerify } from 'jose';
import type { JWK, JWTPayload, ProtectedHeaderParameters } from 'jose';
import { GatewayError } from '../decision/index.js';

/** What one request says a DPoP proof must match (RFC 9449 §4.3, §7.1). */
export interface ProofExpectations {
  /** The request's method as the client sent it (`htm`). */
  readonly method: string;
  /** The URIs the client may have sent the request to, each as `htuOf` gives it (`htu`). */
  readonly uris: readonly string[];
  /** The access token the proof goes with (`ath`). */
  readonly accessToken: string;
  /** The RFC 7638 thumbprint the token is bound to (`cnf.jkt`). */
  readonly boundKey: string;
  readonly algorithms: readonly string[];
  /** How far `iat` may be from `now`, either way, in ms. */
  readonly iatWindow: number;
  /** Milliseconds since the epoch. */
  readonly now: number;
}

/** What a proof that passed every check carries for the checks that need state (replay, nonce). */
export interface VerifiedProof {
  readonly jti: string;
  /** Seconds since the epoch. */
  readonly iat: number;
  readonly nonce: string | undefined;
}

/** A jti longer than this is not a random identifier but a way to make the replay cache hold large keys. */
const MAX_JTI_LENGTH = 256;

/** Three unpadded base64url segments (RFC 7515 §7.1). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Checks a DPoP proof against its request (RFC 9449 §4.3, and §7.1 for a protected resource): one compact JWS,
 * `typ: dpop+jwt`, an allowed asymmetric `alg`, a public `jwk` in the header that verifies the signature and whose
 * thumbprint is the token's `cnf.jkt`, `htm` and `htu` of this request, `iat` within the window, `ath` the hash of
 * this access token, and a `jti`. The replay and nonce checks need state: the caller does them with the result.
 * Throws GatewayError('invalid_dpop_proof') with a log-safe reason.
 */
export async function verifyDpopProof(proof: string, expected: ProofExpectations): Promise<VerifiedProof> {
  if (!COMPACT_JWS.test(proof)) throw invalidProof('not_compact_jws');
  const header = headerOf(proof);
  if (typeof header.typ !== 'string' || header.typ.toLowerCase() !== 'dpop+jwt') throw invalidProof('typ');
  if (typeof header.alg !== 'string' || !expected.algorithms.includes(header.alg)) throw invalidProof('alg_not_allowed');
  const jwk = header.jwk;
  if (typeof jwk !== 'object' || jwk === null) throw invalidProof('jwk_missing');
  if (isPrivate(jwk)) throw invalidProof('jwk_private');

  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...expected.algorithms] }));
  } catch (error) {
    throw invalidProof(error instanceof errors.JOSEError ? error.code : 'ERR_UNEXPECTED');
  }
  if ((await calculateJwkThumbprint(jwk, 'sha256')) !== expected.boundKey) throw invalidProof('key_not_bound');

  const { jti, htm, htu, iat, ath, nonce } = payload;
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) throw invalidProof('jti');
  if (htm !== expected.method) throw invalidProof('htm');
  if (typeof htu !== 'string' || !expected.uris.includes(htuOf(htu) ?? '')) throw invalidProof('htu');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalidProof('iat_missing');
  if (iat * 1000 < expected.now - expected.iatWindow) throw invalidProof('iat_stale');
  if (iat * 1000 > expected.now + expected.iatWindow) throw invalidProof('iat_future');
  if (ath !== accessTokenHash(expected.accessToken)) throw invalidProof(ath === undefined ? 'ath_missing' : 'ath');
  if (nonce !== undefined && typeof nonce !== 'string') throw invalidProof('nonce_type');
  return { jti, iat, nonce };
}

/** RFC 9449 §4.2 `ath`: base64url of the SHA-256 of the access token's ASCII bytes. */
export function accessTokenHash(accessToken: string): string {
  return hash('sha256', accessToken, 'base64url');
}

/**
 * A URI as `htu` compares (RFC 9449 §4.3 check 9): without query and fragment, after RFC 3986 §6.2.2/§6.2.3
 * normalisation (case of scheme and host, default port, dot segments), as WHATWG URL parsing does it. `undefined`
 * for what is not an absolute http(s) URI.
 */
export function htuOf(uri: string): string | undefined {
  if (!URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  url.search = '';
  url.hash = '';
  return url.href;
}

function headerOf(proof: string): ProtectedHeaderParameters {
  try {
    return decodeProtectedHeader(proof);
  } catch {
    throw invalidProof('header');
  }
}

/** A private or symmetric key in the header would hand the signing secret to whoever reads the proof (§4.2). */
function isPrivate(jwk: JWK): boolean {
  return 'd' in jwk || 'k' in jwk || jwk.kty === 'oct';
}

function invalidProof(reason: string): GatewayError {
  return new GatewayError('invalid_dpop_proof', { reason });
}
