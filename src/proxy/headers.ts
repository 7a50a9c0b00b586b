export type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;
export type OutgoingHeaders = Record<string, string | string[]>;

/** Connection-scoped headers (RFC 9110 §7.6.1) plus those undici refuses or the proxy sets itself. */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
] as const;

/**
 * Request headers never forwarded upstream, by exact lowercase name (exported for the operator docs).
 * - credentials meant for the gateway: the client token never passes through (checklist F1). Cookies are
 *   dropped too: MCP clients do not use them, so a cookie can only be a browser's ambient gateway-origin one.
 * - identity and client-address headers an upstream behind other proxies may trust (checklist F3).
 * - `host` (the proxy sets the upstream's) and `expect` (the body is already read; undici rejects it).
 */
export const STRIPPED_REQUEST_HEADERS: readonly string[] = [
  ...HOP_BY_HOP,
  'host',
  'expect',
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'x-auth-token',
  'x-access-token',
  'x-id-token',
  'forwarded',
  'x-real-ip',
  'x-client-ip',
  'x-cluster-client-ip',
  'true-client-ip',
  'client-ip',
  'cf-connecting-ip',
  'x-original-forwarded-for',
  'x-user',
  'x-user-id',
  'x-user-email',
  'x-email',
  'x-userinfo',
  'x-remote-user',
  'remote-user',
  'x-authenticated-user',
  'x-auth-user',
  'x-ssl-client-cert',
  'x-ssl-client-dn',
  'x-ssl-client-verify',
  'x-client-cert',
  'x-client-verify',
  'ssl-client-cert',
  'ssl-client-verify',
  'cf-access-jwt-assertion',
  'cf-access-authenticated-user-email',
  'x-goog-iap-jwt-assertion',
];

/**
 * Request header name prefixes never forwarded: forwarding and auth-proxy identity families (oauth2-proxy,
 * Envoy jwt_authn, AWS ALB, Google IAP, Azure EasyAuth), and `x-mcp-*`, which upstreams have used for users.
 */
export const STRIPPED_REQUEST_HEADER_PREFIXES: readonly string[] = [
  'x-forwarded-',
  'x-auth-request-',
  'x-mcp-',
  'x-jwt-',
  'x-amzn-oidc-',
  'x-goog-authenticated-user-',
  'x-ms-client-principal',
  'x-ms-token-',
];

/**
 * Response headers never relayed to the client: challenges from the upstream's own authorization (the client
 * must only be steered to the gateway's authorization servers, checklist F5), cookies and Alt-Svc it would set
 * on the gateway's origin, and CORS headers, which the gateway decides per route.
 */
const STRIPPED_RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP,
  'www-authenticate',
  'proxy-authenticate',
  'set-cookie',
  'alt-svc',
]);
const STRIPPED_RESPONSE_HEADER_PREFIXES: readonly string[] = ['access-control-'];

const STRIPPED_REQUEST_SET: ReadonlySet<string> = new Set(STRIPPED_REQUEST_HEADERS);

function hasPrefix(name: string, prefixes: readonly string[]): boolean {
  for (const prefix of prefixes) if (name.startsWith(prefix)) return true;
  return false;
}

const NO_CONNECTION_OPTIONS: ReadonlySet<string> = new Set();

/** Header names the sender listed in `Connection`, which a proxy must not forward (RFC 9110 §7.6.1). */
function connectionOptions(value: string | string[] | undefined): ReadonlySet<string> {
  if (value === undefined) return NO_CONNECTION_OPTIONS;
  const list = Array.isArray(value) ? value.join(',') : value;
  return new Set(list.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name.length > 0));
}

/**
 * Copies the headers that are neither `dropped` nor nominated in `Connection`, names lowercased. Node and undici
 * give lowercase names, so `Connection` is one property read; `Object.keys` instead of `Object.entries` saves an
 * array per header.
 */
function filterHeaders(headers: IncomingHeaders, dropped: (name: string) => boolean): OutgoingHeaders {
  const nominated = connectionOptions(headers.connection);
  const kept: OutgoingHeaders = {};
  for (const rawName of Object.keys(headers)) {
    const value = headers[rawName];
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    if (nominated.has(name) || dropped(name)) continue;
    kept[name] = value;
  }
  return kept;
}

/**
 * Every name containing `_` is dropped: nginx ignores them by default and CGI/WSGI-style servers read
 * `x_forwarded_user` and `x-forwarded-user` (or `mcp_session_id` and `mcp-session-id`) as one variable, so an
 * underscore twin could smuggle a value past every check here.
 */
function droppedRequestHeader(name: string): boolean {
  return name.includes('_') || STRIPPED_REQUEST_SET.has(name) || hasPrefix(name, STRIPPED_REQUEST_HEADER_PREFIXES);
}

function droppedResponseHeader(name: string): boolean {
  return STRIPPED_RESPONSE_HEADERS.has(name) || hasPrefix(name, STRIPPED_RESPONSE_HEADER_PREFIXES);
}

/**
 * Headers sent to the upstream (ARCHITECTURE step 7): the client's, minus credentials, identity claims,
 * underscore names and hop-by-hop headers, plus the upstream credential. The credential goes in last, so nothing
 * the client sends — `Connection: authorization` included — removes it.
 */
export function upstreamRequestHeaders(
  clientHeaders: IncomingHeaders,
  credential: Readonly<Record<string, string>>,
): OutgoingHeaders {
  const headers = filterHeaders(clientHeaders, droppedRequestHeader);
  for (const [name, value] of Object.entries(credential)) headers[name.toLowerCase()] = value;
  return headers;
}

/** Headers relayed from the upstream's response to the client. */
export function upstreamResponseHeaders(upstreamHeaders: IncomingHeaders): OutgoingHeaders {
  return filterHeaders(upstreamHeaders, droppedResponseHeader);
}
