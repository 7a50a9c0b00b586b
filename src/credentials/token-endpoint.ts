import { randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { isJsonObject, readText } from '../auth/fetch-json.js';
import { basicCredentials } from '../auth/introspection-client.js';
import { isJsonMediaType } from '../media-type.js';
import { keyIdOf, parsePrivateKey, signingAlgorithmOf } from '../config/private-key.js';
import type { Secret } from '../config/secret.js';
import type { TokenEndpointSettings } from '../config/types.js';

/** Why no usable token came back; a fixed set, safe as a log field (never the answer's text). */
export type TokenRequestFailure =
  | 'timeout'
  | 'network'
  | 'refused'
  | 'server_error'
  | 'unexpected_status'
  | 'malformed'
  | 'unsupported_token_type';

export interface IssuedToken {
  readonly accessToken: string;
  /** `expires_in` in ms, when the answer carried one. */
  readonly expiresInMs: number | undefined;
}

export type TokenRequestResult =
  | { readonly ok: true; readonly token: IssuedToken }
  | { readonly ok: false; readonly failure: TokenRequestFailure; readonly status?: number };

/** Sends one grant to the token endpoint: form parameters in, token or coded failure out; never throws. */
export type TokenRequester = (grant: Readonly<Record<string, string>>) => Promise<TokenRequestResult>;

export interface TokenRequesterDeps {
  readonly fetch?: typeof fetch;
  /** Clock in ms since the epoch (client assertion iat/exp). */
  readonly now?: () => number;
}

const MAX_RESPONSE_BYTES = 64 * 1024;
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const CLIENT_ASSERTION_LIFETIME_S = 60;
/** What goes into an Authorization header must not be able to split it. */
const HEADER_SAFE_TOKEN = /^[\x21-\x7E]+$/;

/**
 * A client of one token endpoint (RFC 6749 §3.2) authenticating as configured: client_secret_basic,
 * client_secret_post, or private_key_jwt (RFC 7523 §2.2, assertion audience = the token endpoint URL). The
 * configured scope, resource (RFC 8707) and audience go with every grant. Redirects are refused.
 */
export function createTokenRequester(settings: TokenEndpointSettings, deps: TokenRequesterDeps = {}): TokenRequester {
  const fetchImpl = deps.fetch ?? globalThis.fetch;
  const now = deps.now ?? Date.now;
  const { clientAuth } = settings;
  const signer =
    clientAuth.method === 'private_key_jwt' ? assertionSigner(clientAuth.privateKey, settings, now) : undefined;

  return async (grant) => {
    const form = new URLSearchParams(grant);
    if (settings.scopes.length > 0) form.set('scope', settings.scopes.join(' '));
    if (settings.resource !== undefined) form.set('resource', settings.resource);
    if (settings.audience !== undefined) form.set('audience', settings.audience);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (clientAuth.method === 'client_secret_basic') {
      headers.authorization = basicCredentials(settings.clientId, clientAuth.clientSecret.reveal());
    } else {
      form.set('client_id', settings.clientId);
      if (clientAuth.method === 'client_secret_post') form.set('client_secret', clientAuth.clientSecret.reveal());
      if (signer) {
        form.set('client_assertion_type', CLIENT_ASSERTION_TYPE);
        form.set('client_assertion', await signer());
      }
    }
    let response: Response;
    try {
      response = await fetchImpl(settings.tokenEndpoint, {
        method: 'POST',
        headers,
        body: form,
        redirect: 'error',
        signal: AbortSignal.timeout(settings.timeout),
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        return { ok: false, failure: statusFailure(response.status), status: response.status };
      }
      if (!isJsonMediaType(response.headers.get('content-type'))) {
        await response.body?.cancel();
        return { ok: false, failure: 'malformed' };
      }
      const text = await readText(response.body, MAX_RESPONSE_BYTES);
      return text === undefined ? { ok: false, failure: 'malformed' } : interpret(text);
    } catch (error) {
      return { ok: false, failure: error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'network' };
    }
  };
}

function assertionSigner(privateKey: Secret, settings: TokenEndpointSettings, now: () => number): () => Promise<string> {
  const text = privateKey.reveal();
  // Validated at config load; a failure here is a programming error, and names no key material.
  const key: KeyObject | undefined = parsePrivateKey(text);
  const alg = key && signingAlgorithmOf(key);
  if (!key || !alg) throw new Error('upstream.auth.private_key is not a usable signing key');
  const kid = keyIdOf(text);
  return () => {
    const issuedAt = Math.floor(now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg, typ: 'JWT', ...(kid === undefined ? {} : { kid }) })
      .setIssuer(settings.clientId)
      .setSubject(settings.clientId)
      .setAudience(settings.tokenEndpoint.href)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + CLIENT_ASSERTION_LIFETIME_S)
      .setJti(randomUUID())
      .sign(key);
  };
}

function statusFailure(status: number): TokenRequestFailure {
  // RFC 6749 §5.2: invalid_client may come as 401; invalid_grant, invalid_scope, invalid_target as 400.
  if (status === 400 || status === 401 || status === 403) return 'refused';
  if (status >= 500) return 'server_error';
  return 'unexpected_status';
}

/** RFC 6749 §5.1 / RFC 8693 §2.2.1: a Bearer `access_token`; `expires_in` optional (a number, or digits). */
function interpret(text: string): TokenRequestResult {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { ok: false, failure: 'malformed' };
  }
  if (!isJsonObject(document)) return { ok: false, failure: 'malformed' };
  const { access_token: accessToken, token_type: tokenType, expires_in: expiresIn } = document;
  if (typeof accessToken !== 'string' || !HEADER_SAFE_TOKEN.test(accessToken)) return { ok: false, failure: 'malformed' };
  if (typeof tokenType !== 'string') return { ok: false, failure: 'malformed' };
  // N_A (a non-access token from an exchange) or DPoP-bound tokens cannot be sent as a plain bearer credential.
  if (tokenType.toLowerCase() !== 'bearer') return { ok: false, failure: 'unsupported_token_type' };
  const seconds = typeof expiresIn === 'string' && /^\d{1,10}$/.test(expiresIn) ? Number(expiresIn) : expiresIn;
  if (seconds !== undefined && (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0)) {
    return { ok: false, failure: 'malformed' };
  }
  return { ok: true, token: { accessToken, expiresInMs: seconds === undefined ? undefined : seconds * 1000 } };
}
