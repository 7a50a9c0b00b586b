import type { CorsSettings } from '../config/types.js';

/**
 * Headers a browser-based MCP client must be able to read: the session id, the auth challenge, when to retry
 * (429/503), the server nonce of its next DPoP proof (RFC 9449 §9).
 */
const EXPOSED_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, DPoP-Nonce';
const MCP_METHODS = 'GET, POST, DELETE, OPTIONS';
const DOCUMENT_METHODS = 'GET, HEAD, OPTIONS';
/** Public documents are the same for everyone and change only on reload: browsers may keep the preflight an hour. */
const DOCUMENT_PREFLIGHT_MAX_AGE_SECONDS = 3600;

/** Request headers of the Streamable HTTP transport (2025-11-25 and 2026-07-28), lower case. */
const MCP_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  // RFC 9449 §4.1: the proof of a DPoP-bound token.
  'dpop',
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-session-id',
  'last-event-id',
  'mcp-method',
  'mcp-name',
]);
/** `Mcp-Param-<name>` (2026-07-28): any RFC 9110 token after the prefix. */
const MCP_PARAM_HEADER = /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** More names than any MCP client sends; a longer list is not echoed at all. */
const MAX_REQUESTED_HEADERS = 64;

export type CorsDecision =
  | { readonly allowed: true; readonly headers: Readonly<Record<string, string>> }
  | { readonly allowed: false };

/** A request without Origin (not a browser): allowed, no CORS headers; one shared answer for the common case. */
const NO_ORIGIN: CorsDecision = Object.freeze({ allowed: true, headers: Object.freeze({}) });

/**
 * Decides whether a request's Origin may use the route. No Origin (non-browser client) is always allowed.
 * Wildcard routes answer `*` and never allow credentials: bearer tokens are not ambient, so there is nothing
 * for a foreign page to ride on. A disallowed Origin is refused outright (MCP transport: validate Origin).
 */

export function corsDecision(cors: CorsSettings, origin: string | undefined): CorsDecision {
  if (origin === undefined) return NO_ORIGIN;
  if (cors.anyOrigin) {
    return { allowed: true, headers: { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS } };
  }
  if (!cors.allowedOrigins.has(origin.toLowerCase())) return { allowed: false };
  return {
    allowed: true,
    headers: { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS, vary: 'Origin' },
  };
}

/**
 * The names of an Access-Control-Request-Headers value that the MCP transport defines, lower case, in request
 * order. Echoed instead of a list of our own, because `Mcp-Param-*` names are open-ended and a `*` wildcard
 * never covers Authorization.
 */
export function allowedRequestHeaders(requested: string | undefined): string[] {
  if (requested === undefined) return [];
  const names = requested.split(',').map((name) => name.trim().toLowerCase());
  if (names.length > MAX_REQUESTED_HEADERS) return [];
  return [...new Set(names.filter((name) => MCP_REQUEST_HEADERS.has(name) || MCP_PARAM_HEADER.test(name)))];
}

function preflight(methods: string, requested: string | undefined, maxAge: number): Record<string, string> {
  const allowed = allowedRequestHeaders(requested);
  return {
    'access-control-allow-methods': methods,
    ...(allowed.length > 0 ? { 'access-control-allow-headers': allowed.join(', ') } : {}),
    'access-control-max-age': String(maxAge),
    vary: 'Access-Control-Request-Headers',
  };
}

/** A preflight on an MCP endpoint whose Origin `corsDecision` allowed; merged over that decision's headers. */
export function preflightHeaders(cors: CorsSettings, requested: string | undefined): Readonly<Record<string, string>> {
  // Replaces the decision's `Vary: Origin` (routes with listed origins), so it names both.
  return { ...preflight(MCP_METHODS, requested, cors.maxAge), vary: 'Origin, Access-Control-Request-Headers' };
}

/** CORS of unauthenticated public documents (protected resource metadata, the gateway's JWKS): any origin. */
export const PUBLIC_DOCUMENT_CORS: Readonly<Record<string, string>> = { 'access-control-allow-origin': '*' };

/**
 * A preflight on a public document. Browsers send the headers their MCP client adds to every request
 * (MCP-Protocol-Version, sometimes Authorization or Content-Type), so those are allowed here too.
 */
export function publicDocumentPreflightHeaders(requested: string | undefined): Readonly<Record<string, string>> {
  return { ...PUBLIC_DOCUMENT_CORS, ...preflight(DOCUMENT_METHODS, requested, DOCUMENT_PREFLIGHT_MAX_AGE_SECONDS) };
}
