import { principalOf } from '../auth/principal.js';
import type { AuthContext } from '../decision/index.js';
import { keyedDigest, upstreamTokenKey } from '../cache/cache-keys.js';
import { createValueSealer } from '../cache/sealed-value.js';
import type { CacheStore } from '../cache/store.js';
import type { TokenEndpointSettings } from '../config/types.js';
import { GatewayError } from '../decision/index.js';
import { clientCredentialText, createTokenRequester, type IssuedToken, type TokenRequester } from './token-endpoint.js';

export type OAuthUpstreamAuth = ({ readonly type: 'client_credentials' } | { readonly type: 'token_exchange' }) &
  TokenEndpointSettings;

export interface OAuthCredentialDeps {
  /** Shared by replicas when Redis is configured, so one token serves them all. */
  readonly store: CacheStore;
  /** HMAC key of cache keys and the key sealing cached tokens. */
  readonly keySecret: Buffer;
  readonly fetch?: typeof fetch;
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

/** Headers for one caller; `subjectToken` is the caller's own token, used only as an RFC 8693 subject_token. */
export type HeadersFor = (auth: AuthContext, subjectToken: string) => Promise<Readonly<Record<string, string>>>;

/** Assumed lifetime of a token whose answer had no `expires_in`. */
const UNKNOWN_LIFETIME_MS = 60_000;
/** Refresh this long before expiry (a quarter of the lifetime for short-lived tokens). */
const MAX_REFRESH_MARGIN_MS = 60_000;

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** How long an issued token may be reused: its lifetime minus a refresh margin, so no request gets a dying token. */
function reusableFor(token: IssuedToken): number {
  const lifetime = token.expiresInMs ?? UNKNOWN_LIFETIME_MS;
  return lifetime - Math.min(MAX_REFRESH_MARGIN_MS, lifetime / 4);
}

interface CachedToken {
  readonly accessToken: string;
  /** Reusable until, ms since the epoch. */
  readonly until: number;
}

/**
 * Upstream tokens from an OAuth token endpoint: `client_credentials` (one token for the route) or RFC 8693
 * `token_exchange` (one per principal and granted scope set, never outliving the caller's token). Tokens are
 * cached sealed in the cache store under HMAC keys that also cover the client credential, so a rotated secret
 * never reuses a token fetched with the old one; the subject token is never stored. One request per key per
 * process goes to the endpoint however many callers wait (single flight). Any failure is `upstream_credentials_failed`
 * (502) and is not cached.
 */
export function createOAuthHeaders(auth: OAuthUpstreamAuth, deps: OAuthCredentialDeps): HeadersFor {
  const now = deps.now ?? Date.now;
  const requestToken: TokenRequester = createTokenRequester(auth, { fetch: deps.fetch, now });
  const sealer = createValueSealer(deps.keySecret, 'upstream token');
  const namespace = [
    auth.type,
    auth.tokenEndpoint.href,
    auth.clientId,
    keyedDigest(deps.keySecret, [clientCredentialText(auth.clientAuth)]),
    auth.scopes.join(' '),
    auth.resource ?? '',
    auth.audience ?? '',
  ];
  const inFlight = new Map<string, Promise<string>>();
  // One token per route for client_credentials: its key never changes.
  const routeKey = upstreamTokenKey(deps.keySecret, namespace);

  function keyFor(caller: AuthContext): string {
    if (auth.type === 'client_credentials') return routeKey;
    return upstreamTokenKey(deps.keySecret, [...namespace, ...principalOf(caller), [...caller.scopes].sort().join(' ')]);
  }

  async function cached(key: string): Promise<string | undefined> {
    const sealed = await deps.store.get(key);
    const text = sealed === undefined ? undefined : sealer.open(key, sealed);
    if (text === undefined) return undefined;
    try {
      const entry = JSON.parse(text) as CachedToken;
      return typeof entry.accessToken === 'string' && typeof entry.until === 'number' && entry.until > now()
        ? entry.accessToken
        : undefined;
    } catch {
      return undefined;
    }
  }

  async function fetchAndRemember(key: string, caller: AuthContext, subjectToken: string): Promise<string> {
    const grant: Record<string, string> =
      auth.type === 'client_credentials'
        ? { grant_type: 'client_credentials' }
        : {
            grant_type: TOKEN_EXCHANGE,
            subject_token: subjectToken,
            subject_token_type: ACCESS_TOKEN_TYPE,
            requested_token_type: ACCESS_TOKEN_TYPE,
          };
    const result = await requestToken(grant);
    if (!result.ok) {
      throw new GatewayError('upstream_credentials_failed', {
        reason: `token_endpoint_${result.failure}${result.status === undefined ? '' : `_${result.status}`}`,
      });
    }
    const issuedAt = now();
    let until = issuedAt + reusableFor(result.token);
    // An exchanged token stands for the caller's: it must not be reused after that one expired.
    if (auth.type === 'token_exchange') until = Math.min(until, caller.expiresAt);
    const entry: CachedToken = { accessToken: result.token.accessToken, until };
    await deps.store.set(key, sealer.seal(key, JSON.stringify(entry)), until - issuedAt);
    return entry.accessToken;
  }

  function fetchOnce(key: string, caller: AuthContext, subjectToken: string): Promise<string> {
    const pending = inFlight.get(key);
    if (pending) return pending;
    const flight = fetchAndRemember(key, caller, subjectToken).finally(() => inFlight.delete(key));
    inFlight.set(key, flight);
    return flight;
  }

  return async (caller, subjectToken) => {
    const key = keyFor(caller);
    const pending = inFlight.get(key);
    const token = pending ? await pending : ((await cached(key)) ?? (await fetchOnce(key, caller, subjectToken)));
    return Object.freeze({ authorization: `Bearer ${token}` });
  };
}
