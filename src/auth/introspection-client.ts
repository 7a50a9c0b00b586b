import type { IntrospectionSettings } from '../config/types.js';
import { CLIENT_ASSERTION_TYPE, createClientAssertionSigner } from '../identity/client-assertion.js';
import { isJsonMediaType } from '../lib/media-type.js';
import { isJsonObject, readText } from './fetch-json.js';

/** Why no usable answer came back; a fixed set, used as log field and metric label. */
export type IntrospectionFailure =
  | 'timeout'
  | 'network'
  | 'credentials_refused'
  | 'rate_limited'
  | 'server_error'
  | 'unexpected_status'
  | 'malformed';

/** The claims of an `active: true` answer that decisions need; every field type-checked. `exp` and `nbf` in seconds. */
export interface IntrospectedClaims {
  readonly iss: string | undefined;
  readonly sub: string | undefined;
  readonly client_id: string | undefined;
  readonly scope: string | undefined;
  readonly aud: readonly string[] | undefined;
  readonly exp: number | undefined;
  readonly nbf: number | undefined;
  readonly token_type: string | undefined;
  /** RFC 7662 `username`: who authorized the token, when the AS names them that way. */
  readonly username: string | undefined;
  /** RFC 7800 confirmation (`cnf`), whatever its shape, when present: the token is sender-constrained. */
  readonly cnf: unknown;
}

export type IntrospectionResult =
  | { readonly outcome: 'active'; readonly claims: IntrospectedClaims }
  | { readonly outcome: 'inactive' }
  | { readonly outcome: 'failed'; readonly failure: IntrospectionFailure; readonly status?: number };

/** An introspection answer is a handful of claims; anything larger is not one we want to parse. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** One RFC 7662 request for `token`; see `createIntrospectionClient`. */
export type IntrospectionRequester = (token: string, signal: AbortSignal) => Promise<IntrospectionResult>;

export interface IntrospectionClientDeps {
  readonly fetch: typeof fetch;
  /** Clock in ms since the epoch (client assertion iat/exp). */
  readonly now: () => number;
}

/**
 * The gateway as a client of one introspection endpoint, authenticating as configured. A request never throws:
 * transport failures, non-200 answers and anything but a JSON object with a boolean `active` come back as
 * `failed` (the gateway cannot decide), never as `inactive`.
 */
export function createIntrospectionClient(settings: IntrospectionSettings, deps: IntrospectionClientDeps): IntrospectionRequester {
  const authenticate = clientAuthentication(settings, deps.now);
  return async (token, signal) => {
    let response: Response;
    try {
      const form = new URLSearchParams({ token, token_type_hint: 'access_token' });
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
      await authenticate(form, headers);
      response = await deps.fetch(settings.endpoint, { method: 'POST', headers, body: form, signal, redirect: 'error' });
    } catch (error) {
      return transportFailure(error);
    }
    try {
      if (response.status !== 200) {
        if (response.status === 400 && (await refusesTokenType(response))) return { outcome: 'inactive' };
        if (!response.bodyUsed) await response.body?.cancel();
        return { outcome: 'failed', failure: statusFailure(response.status), status: response.status };
      }
      if (!isJsonMediaType(response.headers.get('content-type'))) {
        await response.body?.cancel();
        return { outcome: 'failed', failure: 'malformed', status: response.status };
      }
      const text = await readText(response.body, MAX_RESPONSE_BYTES);
      return text === undefined ? { outcome: 'failed', failure: 'malformed' } : interpret(text);
    } catch (error) {
      return transportFailure(error);
    }
  };
}

/**
 * Adds the gateway's client authentication to a request (RFC 7662 §2.1 leaves the method to the server):
 * private_key_jwt (RFC 7523, the assertion's audience the endpoint URL) when a key is configured, else the secret
 * by HTTP Basic or in the form (RFC 6749 §2.3.1), or only the client_id without a secret.
 */
function clientAuthentication(
  settings: IntrospectionSettings,
  now: () => number,
): (form: URLSearchParams, headers: Record<string, string>) => Promise<void> {
  const { clientId, clientSecret, privateKey } = settings;
  if (privateKey !== undefined) {
    const sign = createClientAssertionSigner({ privateKey, clientId, audience: settings.endpoint.href, now });
    return async (form) => {
      form.set('client_id', clientId);
      form.set('client_assertion_type', CLIENT_ASSERTION_TYPE);
      form.set('client_assertion', await sign());
    };
  }
  if (settings.authMethod === 'client_secret_basic') {
    return (_form, headers) => {
      headers.authorization = basicCredentials(clientId, clientSecret?.reveal() ?? '');
      return Promise.resolve();
    };
  }
  return (form) => {
    form.set('client_id', clientId);
    if (clientSecret) form.set('client_secret', clientSecret.reveal());
    return Promise.resolve();
  };
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before being joined and base64-encoded. */
export function basicCredentials(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(secret)}`, 'utf8').toString('base64')}`;
}

function formEncode(value: string): string {
  return new URLSearchParams([['', value]]).toString().slice(1);
}

/**
 * A 400 `unsupported_token_type` (RFC 7009 §2.2.1, which RFC 7662's token_type_hint refers to): the server cannot
 * introspect this kind of token at all, e.g. oidc-provider asked about a JWT access token it issued in JWT form.
 * Such a token is not one this endpoint vouches for: inactive (401), not "cannot decide" (503, retried forever).
 * Reads the body; other 400 answers stay failures.
 */
async function refusesTokenType(response: Response): Promise<boolean> {
  if (!isJsonMediaType(response.headers.get('content-type'))) return false;
  const text = await readText(response.body, MAX_RESPONSE_BYTES);
  if (text === undefined) return false;
  try {
    const document: unknown = JSON.parse(text);
    return isJsonObject(document) && document.error === 'unsupported_token_type';
  } catch {
    return false;
  }
}

function statusFailure(status: number): IntrospectionFailure {
  if (status === 401 || status === 403) return 'credentials_refused';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  return 'unexpected_status';
}

function transportFailure(error: unknown): IntrospectionResult {
  const timedOut = error instanceof Error && error.name === 'TimeoutError';
  return { outcome: 'failed', failure: timedOut ? 'timeout' : 'network' };
}

function interpret(text: string): IntrospectionResult {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { outcome: 'failed', failure: 'malformed' };
  }
  if (!isJsonObject(document)) return { outcome: 'failed', failure: 'malformed' };
  // RFC 7662 §2.2: `active` is a REQUIRED boolean; "true", 1 and absence are malformed, not inactive.
  if (document.active === false) return { outcome: 'inactive' };
  if (document.active !== true) return { outcome: 'failed', failure: 'malformed' };
  const claims = readClaims(document);
  return claims ? { outcome: 'active', claims } : { outcome: 'failed', failure: 'malformed' };
}

/** A claim present with the wrong type makes the whole answer malformed: the AS is broken, not the token. */
function readClaims(document: Readonly<Record<string, unknown>>): IntrospectedClaims | undefined {
  const iss = optionalString(document.iss);
  const sub = optionalString(document.sub);
  const clientId = optionalString(document.client_id);
  const scope = optionalString(document.scope);
  const tokenType = optionalString(document.token_type);
  const aud = readAudience(document.aud);
  const exp = optionalNumber(document.exp);
  const nbf = optionalNumber(document.nbf);
  const username = optionalString(document.username);
  if (iss === null || sub === null || clientId === null || scope === null || tokenType === null || username === null) return undefined;
  if (aud === null || exp === null || nbf === null) return undefined;
  return { iss, sub, client_id: clientId, scope, aud, exp, nbf, token_type: tokenType, username, cnf: document.cnf };
}

/** The readers below answer `undefined` when the claim is absent, `null` when it is malformed. */
function optionalString(value: unknown): string | undefined | null {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : null;
}

function optionalNumber(value: unknown): number | undefined | null {
  if (value === undefined) return undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function readAudience(value: unknown): readonly string[] | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((item): item is string => typeof item === 'string')) return value;
  return null;
}
