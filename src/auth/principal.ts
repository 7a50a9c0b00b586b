import type { AuthContext } from './types.js';

/**
 * Who is calling, for session binding and rate limits: issuer, subject and client id (checklist G5: the same user
 * through another client is another principal). A missing subject or client id counts as empty.
 */
export function principalOf(auth: AuthContext): readonly [issuer: string, subject: string, clientId: string] {
  return [auth.issuer, auth.subject ?? '', auth.clientId ?? ''];
}

/**
 * `compute` memoised per AuthContext object. The JWT verifier's result cache hands out the same context for a
 * reused token, so anything derived from the principal alone (an HMAC of it) is computed once per token, not
 * once per request. Another context with equal contents is computed again: the memo trusts identity, not equality.
 */
export function perCaller<V extends NonNullable<unknown>>(compute: (auth: AuthContext) => V): (auth: AuthContext) => V {
  const memo = new WeakMap<AuthContext, V>();
  return (auth) => {
    const known = memo.get(auth);
    if (known !== undefined) return known;
    const value = compute(auth);
    memo.set(auth, value);
    return value;
  };
}
