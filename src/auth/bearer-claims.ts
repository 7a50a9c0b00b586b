/**
 * What every verifier holds a valid token to before it becomes a caller, whatever carried its claims (a JWT or an
 * introspection answer): the one place these rules live.
 */
export type BearerRefusal =
  /** RFC 9449 §7.1 / RFC 8705 §3: a token bound to a key (`cnf`) presented as a plain Bearer token. */
  | 'sender_constrained'
  /** Neither a subject nor a client: sessions, rate limits and caches keyed by the principal would be shared. */
  | 'no_principal';

export interface BearerClaims {
  /** The token's `cnf` claim (RFC 7800), whatever its shape: any confirmation method binds the token. */
  readonly cnf: unknown;
  readonly subject: string | undefined;
  readonly clientId: string | undefined;
}

/** Why a token that verified cannot be used as a Bearer token here, or `undefined`. */
export function bearerRefusal(claims: BearerClaims): BearerRefusal | undefined {
  if (claims.cnf !== undefined) return 'sender_constrained';
  if (!claims.subject && !claims.clientId) return 'no_principal';
  return undefined;
}

/**
 * An identity claim (`sub`, `client_id`, `azp`, `username`) as a principal is built from it: an empty string names
 * no one, so it counts as absent, instead of being one subject or client every such token shares.
 */
export function named(claim: string | undefined): string | undefined {
  return claim === '' ? undefined : claim;
}
