import type { AuthContext } from '../auth/types.js';
import type { UpstreamAuth } from '../config/types.js';
import type { ElicitationRequest } from '../decision/elicitation.js';
import type { MaybePromise } from '../lib/maybe-promise.js';
import { createOAuthHeaders, type OAuthCredentialDeps } from './oauth-credentials.js';
import type { UserGrants } from './user-oauth.js';

/**
 * Headers that authenticate the gateway to one route's upstream. Takes the caller's AuthContext and token so that
 * per-principal credentials (RFC 8693 token exchange) fit the same seam: the token is only ever sent to the
 * configured exchange endpoint as `subject_token`, never to the upstream, and is never among the headers.
 */
export interface UpstreamCredentialProvider {
  /**
   * `request`: what a per-user grant needs to ask for consent in the request's own protocol revision. A static
   * credential comes at once; one that may have to be fetched comes as a promise (and any refusal as its rejection).
   */
  headersFor(auth: AuthContext, subjectToken: string, request?: ElicitationRequest): MaybePromise<Readonly<Record<string, string>>>;
  /**
   * The upstream answered 401 to a request sent with `sent`: a per-user grant (user_oauth) is dropped so the next
   * request asks for consent again. Never throws.
   */
  upstreamRejected?(auth: AuthContext, sent: Readonly<Record<string, string>>): Promise<void>;
}

/**
 * What OAuth-based credentials need: the cache store and key secret, injectable fetch and clock, and for
 * user_oauth the route's grants (built with the consent pages, src/consent/).
 */
export type CredentialDeps = OAuthCredentialDeps & { readonly userGrants?: UserGrants };

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The secret stays in the closure and is revealed per request, so the provider itself prints nothing. */
export function createUpstreamCredentialProvider(auth: UpstreamAuth, deps: CredentialDeps): UpstreamCredentialProvider {
  switch (auth.type) {
    case 'none':
      return { headersFor: () => NO_HEADERS };
    case 'bearer': {
      const { token } = auth;
      return { headersFor: () => Object.freeze({ authorization: `Bearer ${token.reveal()}` }) };
    }
    case 'header': {
      const name = auth.name.toLowerCase();
      const { value } = auth;
      return { headersFor: () => Object.freeze({ [name]: value.reveal() }) };
    }
    case 'client_credentials':
    case 'token_exchange':
      return { headersFor: createOAuthHeaders(auth, deps) };
    case 'user_oauth':
      if (!deps.userGrants) throw new Error('user_oauth needs the consent section');
      return deps.userGrants;
    default: {
      const unknown: never = auth;
      throw new Error(`unsupported upstream auth type: ${(unknown as { type: string }).type}`);
    }
  }
}
