import { hash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { parseWwwAuthenticate, type Challenge } from './www-authenticate.js';

/** The one algorithm `login` signs proofs with (ES256: what RFC 9449's examples and every DPoP server take). */
export const DPOP_ALGORITHM = 'ES256';

/**
 * Whether a server's metadata (RFC 8414 or RFC 9728, both `dpop_signing_alg_values_supported`) says it takes proofs
 * signed with DPOP_ALGORITHM.
 */
export function takesDpop(metadata: Readonly<Record<string, unknown>> | undefined): boolean {
  const algorithms = metadata?.dpop_signing_alg_values_supported;
  return Array.isArray(algorithms) && algorithms.includes(DPOP_ALGORITHM);
}

/**
 * A client's DPoP key (RFC 9449): signs one proof per request, and keeps the nonce each server last named
 * (`DPoP-Nonce`, §8 and §9) for the proofs sent to it. The private JWK lives in the token store (user-only).
 */
export interface DpopSigner {
  /** The private key as JWK, for the token store. */
  readonly privateJwk: JWK;
  /** The RFC 7638 thumbprint of the public key: a bound token's `cnf.jkt`. */
  thumbprint(): Promise<string>;
  /** A proof for `method` on `url` (query and fragment left out of `htu`), with `ath` when a token goes with it. */
  proof(method: string, url: string, accessToken?: string): Promise<string>;
  /** Keeps the nonce a response names for its server; true when it is a new one. */
  remember(url: string, response: Response): boolean;
}

/** A signer for `privateJwk`, or for a fresh ES256 key. */
export async function createDpopSigner(privateJwk?: JWK): Promise<DpopSigner> {
  const jwk = privateJwk ?? (await exportJWK((await generateKeyPair(DPOP_ALGORITHM, { extractable: true })).privateKey));
  const key = (await importJWK(jwk, DPOP_ALGORITHM)) as CryptoKey;
  const { kty, crv, x, y } = jwk;
  const publicJwk = { kty, crv, x, y };
  const nonces = new Map<string, string>();
  return {
    privateJwk: jwk,
    thumbprint: () => calculateJwkThumbprint(publicJwk, 'sha256'),
    async proof(method, url, accessToken) {
      const target = new URL(url);
      const nonce = nonces.get(target.origin);
      target.search = '';
      target.hash = '';
      const claims = {
        jti: randomUUID(),
        htm: method,
        htu: target.href,
        ...(accessToken === undefined ? {} : { ath: hash('sha256', accessToken, 'base64url') }),
        ...(nonce === undefined ? {} : { nonce }),
      };
      return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: DPOP_ALGORITHM, jwk: publicJwk }).setIssuedAt().sign(key);
    },
    remember(url, response) {
      const nonce = response.headers.get('dpop-nonce');
      const origin = new URL(url).origin;
      if (nonce === null || nonce === '' || nonces.get(origin) === nonce) return false;
      nonces.set(origin, nonce);
      return true;
    },
  };
}

/** A `DPoP` challenge (RFC 9449 §7.1) that takes proofs signed with DPOP_ALGORITHM: its `algs` list it, or it has none. */
export function challengeTakesDpop(challenge: Challenge | undefined): boolean {
  if (challenge === undefined) return false;
  const algs = challenge.params.get('algs');
  return algs === undefined || algs.split(' ').includes(DPOP_ALGORITHM);
}

/** The `cnf.jkt` of a JWT access token (RFC 9449 §6.1), when it is one and is DPoP-bound. */
export function boundKeyOf(token: string): string | undefined {
  try {
    const { cnf } = decodeJwt(token);
    const jkt = typeof cnf === 'object' && cnf !== null ? (cnf as { jkt?: unknown }).jkt : undefined;
    return typeof jkt === 'string' ? jkt : undefined;
  } catch {
    return undefined;
  }
}

/** RFC 9449 §8: a token endpoint's 400 `use_dpop_nonce`. */
async function asksAuthorizationServerNonce(response: Response): Promise<boolean> {
  if (response.status !== 400) return false;
  const body = (await response.clone().json().catch(() => undefined)) as { error?: unknown } | undefined;
  return body?.error === 'use_dpop_nonce';
}

/** RFC 9449 §9: a resource's 401 with a `DPoP` challenge naming `use_dpop_nonce`. */
function asksResourceNonce(response: Response): boolean {
  if (response.status !== 401) return false;
  const parsed = parseWwwAuthenticate(response.headers.get('www-authenticate') ?? '');
  return parsed.ok && parsed.challenges.some((challenge) => challenge.scheme.toLowerCase() === 'dpop' && challenge.params.get('error') === 'use_dpop_nonce');
}

/**
 * A fetch for the token endpoint that sends a proof with every token request (RFC 9449 §5), so the tokens issued are
 * bound to the signer's key; asked for a nonce, it retries once with it (§8).
 */
export function dpopTokenFetch(signer: DpopSigner, base: FetchLike): FetchLike {
  return async (url, init) => {
    const href = String(url);
    const send = async () => {
      const headers = new Headers(init?.headers);
      headers.set('dpop', await signer.proof(init?.method ?? 'GET', href));
      return base(url, { ...init, headers });
    };
    const response = await send();
    if (!signer.remember(href, response) || !(await asksAuthorizationServerNonce(response))) return response;
    await response.body?.cancel();
    return send();
  };
}

/**
 * A fetch for the MCP server that presents `token` as `Authorization: DPoP` with a fresh proof on every request
 * (RFC 9449 §7.1); asked for a nonce, it retries once with it (§9).
 */
export async function dpopResourceFetch(signer: DpopSigner, base: FetchLike, token: string, url: string | URL, init?: RequestInit): Promise<Response> {
  const href = String(url);
  const send = async () => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `DPoP ${token}`);
    headers.set('dpop', await signer.proof(init?.method ?? 'GET', href, token));
    return base(url, { ...init, headers });
  };
  const response = await send();
  if (!signer.remember(href, response) || !asksResourceNonce(response)) return response;
  await response.body?.cancel();
  return send();
}
