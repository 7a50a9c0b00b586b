/** Context-free checks on single config values. Each returns why a value is wrong, or `undefined`. */

/** RFC 6749 §3.3 scope-token: 1*( %x21 / %x23-5B / %x5D-7E ), so a scope can always be quoted in a challenge. */
export const SCOPE_PATTERN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** Where the gateway serves its own consent pages (user_oauth); no route may live there. */
export const CONSENT_PATH_PREFIX = '/consent';

export const ROUTE_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** RFC 9110 §5.6.2 token. */
export const HEADER_NAME_PATTERN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * RFC 3986 path characters without percent-encoding (a configured path matches requests byte for byte) and
 * without the sub-delimiters that shells give meaning to: the path ends up in advertised resource URLs.
 */
const PATH_CHARACTERS = /^[A-Za-z0-9\-._~+,=:@/]*$/;

/** Headers the gateway or the HTTP layer owns: an upstream credential must not replace them. */
const RESERVED_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  // RFC 9449 §4.1: the client's proof is for the gateway, never forwarded or replaced.
  'dpop',
  'cookie',
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'mcp-session-id',
  'mcp-protocol-version',
]);

/**
 * Paths the gateway answers itself on its listeners (health, readiness, metrics; metadata lives under
 * /.well-known/): a route there would be shadowed, or would shadow them (test/security/config-paths.test.ts).
 */
export const GATEWAY_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

export function routePathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must start with "/"';
  if (path.includes('?')) return 'must not contain a query';
  if (path.includes('#')) return 'must not contain a fragment';
  if (!PATH_CHARACTERS.test(path)) return 'may contain only letters, digits and - . _ ~ + , = : @ /';
  if (path.includes('//')) return 'must not contain "//"';
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) {
    return 'must not contain "." or ".." segments';
  }
  if (path.length > 1 && path.endsWith('/')) return 'must not end with "/"';
  if (path === '/.well-known' || path.startsWith('/.well-known/')) return 'must not be under "/.well-known/"';
  if (GATEWAY_PATHS.has(path)) return `is one of the gateway's own paths (${[...GATEWAY_PATHS].join(', ')})`;
  if (path === CONSENT_PATH_PREFIX || path.startsWith(`${CONSENT_PATH_PREFIX}/`)) {
    return `must not be under "${CONSENT_PATH_PREFIX}/" (the gateway's consent pages)`;
  }
  return undefined;
}

export function headerNameProblem(name: string): string | undefined {
  if (!HEADER_NAME_PATTERN.test(name)) return 'must be an HTTP header name (RFC 9110 token characters)';
  if (RESERVED_HEADERS.has(name.toLowerCase())) return `"${name}" is managed by the gateway and cannot be set`;
  return undefined;
}

/**
 * A client header an operator forwards: a header name the gateway does not manage, without `_` (an underscore
 * twin of another header is never forwarded, src/proxy/headers.ts).
 */
export function forwardedHeaderProblem(name: string): string | undefined {
  if (name.includes('_')) return 'must not contain "_" (such headers are never forwarded)';
  return headerNameProblem(name);
}

/** An `allowed_hosts` entry: a host name or address, optionally with a port, as a Host header carries it. */
export function hostProblem(value: string): string | undefined {
  try {
    const url = new URL(`http://${value}`);
    if (url.host !== value.toLowerCase() && url.hostname !== value.toLowerCase()) return 'must be a host name or address, optionally with :port';
  } catch {
    return 'must be a host name or address, optionally with :port';
  }
  return undefined;
}

/** Secret header values: visible ASCII and inner spaces/tabs only, so they cannot split or end a header. */
export function headerValueProblem(value: string): string | undefined {
  if (!/^[\x21-\x7E]([\x20-\x7E\t]*[\x21-\x7E])?$/.test(value)) {
    return 'must be visible ASCII without line breaks or surrounding whitespace';
  }
  return undefined;
}

/** Bearer credentials (RFC 6750 §2.1 b64token, loosened to any visible ASCII). */
export function bearerTokenProblem(token: string): string | undefined {
  return /^[\x21-\x7E]+$/.test(token) ? undefined : 'must be visible ASCII without spaces or line breaks';
}

/** A CORS origin `scheme://host[:port]`, exactly as browsers send it. */
export function originProblem(origin: string): string | undefined {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'must be an origin like "https://app.example.com"';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https origin';
  if (url.origin !== origin.toLowerCase()) return `must be exactly scheme://host[:port]; write "${url.origin}"`;
  return undefined;
}

/** The Redis URL is a secret (it may carry a password): messages never include it. */
export function redisUrlProblem(value: string): string | undefined {
  try {
    const { protocol } = new URL(value);
    if (protocol === 'redis:' || protocol === 'rediss:') return undefined;
  } catch {
    // fall through to the generic message
  }
  return 'must be a redis:// or rediss:// URL';
}
