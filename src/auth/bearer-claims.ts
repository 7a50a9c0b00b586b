/**
 * What every verifier holds a valid token to before it becomes a caller, whatever carried its claims (a JWT or an
 * introspection answer): the one place these rules live.
 */
export type BearerRefusal =
  /** RFC 8705 §3 and others: a token bound by a confirmation method the gateway cannot check (anything but `jkt`). */
  | 'sender_constrained'
  /** Neither a subject nor a client: sessions, rate limits and caches keyed by the principal would be shared. */
  | 'no_principal';

export interface BearerClaims {
  /** The token's `cnf` claim (RFC 7800), whatever its shape: any confirmation method binds the token. */
  readonly cnf: unknown;
  readonly subject: string | undefined;
  readonly clientId: string | undefined;
}

/** Why a token that verified cannot be used here, or `undefined`. */
export function bearerRefusal(claims: BearerClaims): BearerRefusal | undefined {
  if (claims.cnf !== undefined && boundKeyOf(claims.cnf) === undefined) return 'sender_constrained';
  if (!claims.subject && !claims.clientId) return 'no_principal';
  return undefined;
}

/**
 * The RFC 7638 thumbprint of a DPoP binding (RFC 9449 §6.1: `cnf` holding `jkt`, a SHA-256 thumbprint, 43
 * base64url characters), when `cnf` is that and nothing more: a binding by another method as well (`x5t#S256`,
 * RFC 8705) is one the gateway could not check.
 */
export function boundKeyOf(cnf: unknown): string | undefined {
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf)) return undefined;
  const members = Object.keys(cnf);
  const { jkt } = cnf as { jkt?: unknown };
  return members.length === 1 && typeof jkt === 'string' && JKT.test(jkt) ? jkt : undefined;
}

const JKT = /^[A-Za-z0-9_-]{43}$/;

/**
 * An identity claim (`sub`, `client_id`, `azp`, `username`) as a principal is built from it: an empty string names
 * no one, so it counts as absent, instead of being one subject or client every such token shares.
 */
export function named(claim: string | undefined): string | undefined {
  return claim === '' ? undefined : claim;
}
