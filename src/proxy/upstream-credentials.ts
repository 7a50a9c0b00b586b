import type { AuthContext } from '../auth/types.js';
import type { UpstreamAuth } from '../config/types.js';

/**
 * Headers that authenticate the gateway to one route's upstream. Takes the caller's AuthContext so that
 * per-principal credentials (RFC 8693 token exchange) fit the same seam; the client's token is never among them.
 */
export interface UpstreamCredentialProvider {
  headersFor(auth: AuthContext): Promise<Readonly<Record<string, string>>>;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The secret stays in the closure and is revealed per request, so the provider itself prints nothing. */
export function createUpstreamCredentialProvider(auth: UpstreamAuth): UpstreamCredentialProvider {
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
    default: {
      const unknown: never = auth;
      throw new Error(`unsupported upstream auth type: ${(unknown as { type: string }).type}`);
    }
  }
}
