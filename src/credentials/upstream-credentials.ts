import type { AuthContext } from '../auth/types.js';
import type { UpstreamAuth } from '../config/types.js';
import { createOAuthHeaders, type OAuthCredentialDeps } from './oauth-credentials.js';

/**
 * Headers that authenticate the gateway to one route's upstream. Takes the caller's AuthContext and token so that
 * per-principal credentials (RFC 8693 token exchange) fit the same seam: the token is only ever sent to the
 * configured exchange endpoint as `subject_token`, never to the upstream, and is never among the headers.
 */
export interface UpstreamCredentialProvider {
  headersFor(auth: AuthContext, subjectToken: string): Promise<Readonly<Record<string, string>>>;
}

/** What OAuth-based credentials need: the cache store and key secret, and injectable fetch and clock. */
export type CredentialDeps = OAuthCredentialDeps;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The secret stays in the closure and is revealed per request, so the provider itself prints nothing. */
export function createUpstreamCredentialProvider(auth: UpstreamAuth, deps: CredentialDeps): UpstreamCredentialProvider {
  switch (auth.type) {
    case 'none':
      return { headersFor: () => Promise.resolve(NO_HEADERS) };
    case 'bearer': {
      const { token } = auth;
      return { headersFor: () => Promise.resolve(Object.freeze({ authorization: `Bearer ${token.reveal()}` })) };
    }
    case 'header': {
      const name = auth.name.toLowerCase();
      const { value } = auth;
      return { headersFor: () => Promise.resolve(Object.freeze({ [name]: value.reveal() })) };
    }
    case 'client_credentials':
    case 'token_exchange':
      return { headersFor: createOAuthHeaders(auth, deps) };
    default: {
      const unknown: never = auth;
      throw new Error(`unsupported upstream auth type: ${(unknown as { type: string }).type}`);
    }
  }
}
