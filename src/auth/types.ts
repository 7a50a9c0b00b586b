import type { MaybePromise } from '../lib/maybe-promise.js';

/** What the gateway knows about the caller after a token was accepted. Never contains the token itself. */
export interface AuthContext {
  readonly issuer: string;
  /** `sub`; absent for some client_credentials tokens. */
  readonly subject: string | undefined;
  /** `client_id` (or `azp`), when the token carries it. */
  readonly clientId: string | undefined;
  readonly scopes: ReadonlySet<string>;
  readonly audience: readonly string[];
  /** Expiry, milliseconds since the epoch. */
  readonly expiresAt: number;
  readonly tokenKind: 'jwt' | 'introspection';
}

/** What a verifier may know about the request besides its token. */
export interface VerifyRequest {
  /** The client's network address (the TCP peer): introspection shares its capacity fairly between clients. */
  readonly clientAddress?: string | undefined;
  /** The connection the token came on (its socket): the token's cache key is remembered for it (`perConnection`). */
  readonly connection?: object | undefined;
}

/**
 * Validates a bearer token for one route. Gives an AuthContext, or rejects with a GatewayError whose code is
 * `invalid_token` (the token is bad) or `auth_unavailable` (the gateway cannot decide now). Never anything else.
 * A verdict at hand (a token verified before) comes back at once rather than as a promise; a refusal always comes
 * as a rejected promise.
 */
export interface TokenVerifier {
  verify(token: string, request?: VerifyRequest): MaybePromise<AuthContext>;
  /** True once the verifier can decide (e.g. JWKS fetched at least once). */
  isReady(): boolean;
  /** Warm-up at start (fetch JWKS); never throws. */
  warm(): Promise<void>;
  close(): Promise<void>;
}
