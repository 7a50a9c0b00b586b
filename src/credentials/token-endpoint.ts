import { isJsonObject, readText } from '../auth/fetch-json.js';
import { basicCredentials } from '../auth/introspection-client.js';
import { CLIENT_ASSERTION_TYPE, createClientAssertionSigner } from '../identity/client-assertion.js';
import { isJsonMediaType } from '../lib/media-type.js';
import type { TokenEndpointClientAuth, TokenEndpointSettings } from '../config/types.js';

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
  /** `refresh_token`, when the answer carried one (authorization code and refresh grants). */
  readonly refreshToken?: string;
  /** `scope` as granted, when the answer named it (RFC 6749 §5.1: else the requested scope). */
  readonly scope?: string;
  /** OpenID Connect `id_token`, when the answer carried one. */
  readonly idToken?: string;
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
/** What goes into an Authorization header must not be able to split it. */
const HEADER_SAFE_TOKEN = /^[\x21-\x7E]+$/;

/**
 * A client of one token endpoint (RFC 6749 §3.2) authenticating as configured: client_secret_basic,
 * client_secret_post, or private_key_jwt (RFC 7523 §2.2, assertion audience = the token endpoint URL). The
 * configured scope, resource (RFC 8707) and audience go with every grant. Redirects are refused.
 */
export function createTokenRequester(settings: TokenEndpointSettings, deps: TokenRequesterDeps = {}): TokenRequester {
  const post = createClientPost(settings, deps);
  return async (grant) => {
    const form = new URLSearchParams(grant);
    if (settings.scopes.length > 0) form.set('scope', settings.scopes.join(' '));
    if (settings.resource !== undefined) form.set('resource', settings.resource);
    if (settings.audience !== undefined) form.set('audience', settings.audience);
    try {
      const response = await post(settings.tokenEndpoint, form);
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

/** Asks an RFC 7009 revocation endpoint to revoke a token; true when it answered 200. Never throws. */
export type TokenRevoker = (endpoint: URL, token: string, hint: 'access_token' | 'refresh_token') => Promise<boolean>;

export function createTokenRevoker(settings: TokenEndpointSettings, deps: TokenRequesterDeps = {}): TokenRevoker {
  const post = createClientPost(settings, deps);
  return async (endpoint, token, hint) => {
    try {
      const response = await post(endpoint, new URLSearchParams({ token, token_type_hint: hint }));
      await response.body?.cancel();
      return response.status === 200;
    } catch {
      return false;
    }
  };
}

/**
 * POSTs a form to one of the authorization server's endpoints, authenticating as configured; redirects are
 * refused and the whole exchange is bounded by the configured timeout. Rejects on network failure and timeout.
 */
function createClientPost(settings: TokenEndpointSettings, deps: TokenRequesterDeps): (url: URL, form: URLSearchParams) => Promise<Response> {
  const fetchImpl = deps.fetch ?? globalThis.fetch;
  const { clientAuth } = settings;
  const signer =
    clientAuth.method === 'private_key_jwt'
      ? createClientAssertionSigner({
          privateKey: clientAuth.privateKey,
          clientId: settings.clientId,
          audience: settings.tokenEndpoint.href,
          now: deps.now ?? Date.now,
        })
      : undefined;
  return async (url, form) => {
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (clientAuth.method === 'client_secret_basic') {
      headers.authorization = basicCredentials(settings.clientId, clientAuth.clientSecret.reveal());
    } else {
      // client_secret_post, private_key_jwt and public clients (`none`) all name themselves in the form.
      form.set('client_id', settings.clientId);
      if (clientAuth.method === 'client_secret_post') form.set('client_secret', clientAuth.clientSecret.reveal());
      if (signer) {
        form.set('client_assertion_type', CLIENT_ASSERTION_TYPE);
        form.set('client_assertion', await signer());
      }
    }
    return fetchImpl(url, { method: 'POST', headers, body: form, redirect: 'error', signal: AbortSignal.timeout(settings.timeout) });
  };
}

/** The text of the credential a client authenticates with (empty for a public client), for keyed digests. */
export function clientCredentialText(clientAuth: TokenEndpointClientAuth): string {
  switch (clientAuth.method) {
    case 'private_key_jwt':
      return clientAuth.privateKey.reveal();
    case 'none':
      return '';
    default:
      return clientAuth.clientSecret.reveal();
  }
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
  const token: IssuedToken = { accessToken, expiresInMs: seconds === undefined ? undefined : seconds * 1000 };
  const { refresh_token: refreshToken, scope, id_token: idToken } = document;
  // What else an answer carries is optional; a present value of the wrong shape is a malformed answer.
  if (!isOptionalString(refreshToken, HEADER_SAFE_TOKEN) || !isOptionalString(scope) || !isOptionalString(idToken)) {
    return { ok: false, failure: 'malformed' };
  }
  return {
    ok: true,
    token: {
      ...token,
      ...(refreshToken === undefined ? {} : { refreshToken }),
      ...(scope === undefined ? {} : { scope }),
      ...(idToken === undefined ? {} : { idToken }),
    },
  };
}

function isOptionalString(value: unknown, pattern?: RegExp): value is string | undefined {
  return value === undefined || (typeof value === 'string' && (pattern === undefined || pattern.test(value)));
}
