import type { AuthContext } from '../decision/index.js';

/**
 * Who is calling, for session binding and rate limits: issuer, subject and client id (the same user
 * through another client is another principal). A missing subject or client id counts as empty.
 */
export function principalOf(auth: AuthContext): readonly [issuer: string, subject: string, clientId: string] {
  return [auth.issuer, auth.subject ?? '', auth.clientId ?? ''];
}

