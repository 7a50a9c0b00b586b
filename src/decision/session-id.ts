/** MCP transports: a session id is visible ASCII (0x21–0x7E); the gateway also caps its length. */
export const MAX_SESSION_ID_BYTES = 256;

const VISIBLE_ASCII = /^[\x21-\x7E]+$/;

/**
 * The request's Mcp-Session-Id: absent, one valid id, or invalid (characters outside 0x21–0x7E,
 * CR/LF, over 256 bytes, or several header lines, which Node joins with ", "). Invalid values are never logged.
 */
export type SessionIdHeader =
  | { readonly kind: 'absent' }
  | { readonly kind: 'valid'; readonly id: string }
  | { readonly kind: 'invalid' };

export function readSessionId(value: string | string[] | undefined): SessionIdHeader {
  if (value === undefined) return { kind: 'absent' };
  if (typeof value !== 'string' || value.length > MAX_SESSION_ID_BYTES || !VISIBLE_ASCII.test(value)) {
    return { kind: 'invalid' };
  }
  return { kind: 'valid', id: value };
}
