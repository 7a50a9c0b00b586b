import type { UpstreamAuth } from '../config/types.js';
import type { UpstreamCredentialProvider } from '../decision/index.js';
import { createOAuthHeaders, type OAuthCredentialDeps } from './oauth-credentials.js';

/** Every upstream credential but each user's own grant, which grants/ provides (user_oauth). */
export type GatewayCredential = Exclude<UpstreamAuth, { readonly type: 'user_oauth' }>;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The gateway's own credential towards one route's upstream. The secret stays in the closure and is revealed per
 * request, so the provider itself prints nothing.
 */
export function createUpstreamCredentialProvider(auth: GatewayCredential, deps: OAuthCredentialDeps): UpstreamCredentialProvider {
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
    default: {
      const unknown: never = auth;
      throw new Error(`unsupported upstream auth type: ${(unknown as { type: string }).type}`);
    }
  }
}
