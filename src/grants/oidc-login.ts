import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AuthorizationCodeFlow, AuthorizationRequest } from './authorization-code-client.js';
import type { Principal } from './grant-store.js';

/** How a sign-in at the gateway's own authorization server ended; failures are fixed codes, safe to log. */
export type LoginResult =
  /** `claims`: the verified ID token's, for decisions made from them (the authorization server's entitlements). */
  | { readonly ok: true; readonly user: Principal; readonly claims: JWTPayload }
  | { readonly ok: false; readonly failure: 'unavailable' | 'refused' | 'invalid_id_token' };

/**
 * Proves who is at the browser: OpenID Connect authorization code flow (PKCE, state, nonce) at the gateway's
 * own authorization server, the ID token verified with jose against the issuer's keys (issuer, audience = the
 * consent client, asymmetric algorithms only, nonce). The signed-in `iss` + `sub` is the user.
 */
export interface OidcLogin {
  /** The authorization server users sign in at. */
  readonly issuer: string;
  start(redirectUri: string, state: string, nonce: string): Promise<AuthorizationRequest | undefined>;
  finish(code: string, codeVerifier: string, redirectUri: string, nonce: string): Promise<LoginResult>;
}

/** Signature algorithms an ID token may use: never `none`, never HS* (keyed with the client secret). */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_TOLERANCE_SECONDS = 30;

/** `scope`: what the sign-in asks for (OpenID Connect: always with `openid`). */
export function createOidcLogin(flow: AuthorizationCodeFlow, clientId: string, timeoutMs: number, scope = 'openid'): OidcLogin {
  const keySets = new Map<string, JWTVerifyGetKey>();
  const keySetOf = (url: URL) => {
    let keys = keySets.get(url.href);
    if (!keys) {
      keys = createRemoteJWKSet(url, { timeoutDuration: timeoutMs });
      keySets.set(url.href, keys);
    }
    return keys;
  };

  return {
    issuer: flow.issuer,
    start: (redirectUri, state, nonce) => flow.authorizationRequest({ redirectUri, state, nonce, scope }),
    async finish(code, codeVerifier, redirectUri, nonce) {
      const endpoints = await flow.endpoints();
      if (!endpoints?.jwksUri) return { ok: false, failure: 'unavailable' };
      const answer = await flow.redeemCode(code, codeVerifier, redirectUri);
      if (!answer.ok) return { ok: false, failure: answer.failure === 'refused' ? 'refused' : 'unavailable' };
      const idToken = answer.token.idToken;
      if (idToken === undefined) return { ok: false, failure: 'invalid_id_token' };
      try {
        const { payload } = await jwtVerify(idToken, keySetOf(endpoints.jwksUri), {
          issuer: flow.issuer,
          audience: clientId,
          algorithms: ID_TOKEN_ALGORITHMS,
          requiredClaims: ['sub', 'exp', 'iat'],
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
        });
        if (payload.nonce !== nonce || typeof payload.sub !== 'string' || payload.sub === '') {
          return { ok: false, failure: 'invalid_id_token' };
        }
        return { ok: true, user: { issuer: flow.issuer, subject: payload.sub }, claims: payload };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        // Keys that cannot be fetched are an outage, not a bad token.
        const unavailable = code === 'ERR_JWKS_TIMEOUT' || (error instanceof Error && error.name === 'TypeError');
        return { ok: false, failure: unavailable ? 'unavailable' : 'invalid_id_token' };
      }
    },
  };
}
