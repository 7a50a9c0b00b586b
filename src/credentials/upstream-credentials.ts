import type { UpstreamCredentialProvider } from '../decision/index.js';
import type { UpstreamAuth } from '../config/types.js';
import { createOAuthHeaders, type OAuthCredentialDeps } from './oauth-credentials.js';
import type { UserGrants } from './user-oauth.js';

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
