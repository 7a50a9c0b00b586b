import type { CorsSettings } from '../config/types.js';

/** Headers a browser-based MCP client must be able to read: the session id, the auth challenge, when to retry (429/503). */
const EXPOSED_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After';
const ALLOWED_METHODS = 'GET, POST, DELETE, OPTIONS';
const ALLOWED_HEADERS =
  'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name';

export type CorsDecision =
  | { readonly allowed: true; readonly headers: Readonly<Record<string, string>> }
  | { readonly allowed: false };

/**
 * Decides whether a request's Origin may use the route. No Origin (non-browser client) is always allowed.
 * Wildcard routes answer `*` and never allow credentials: bearer tokens are not ambient, so there is nothing
 * for a foreign page to ride on. A disallowed Origin is refused outright (MCP transport: validate Origin).
 */
export function corsDecision(cors: CorsSettings, origin: string | undefined): CorsDecision {
  if (origin === undefined) return { allowed: true, headers: {} };
  if (cors.anyOrigin) {
    return { allowed: true, headers: { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS } };
  }
  if (!cors.allowedOrigins.has(origin.toLowerCase())) return { allowed: false };
  return {
    allowed: true,
    headers: { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS, vary: 'Origin' },
  };
}

export function preflightHeaders(cors: CorsSettings): Readonly<Record<string, string>> {
  return {
    'access-control-allow-methods': ALLOWED_METHODS,
    'access-control-allow-headers': ALLOWED_HEADERS,
    'access-control-max-age': String(cors.maxAge),
  };
}
