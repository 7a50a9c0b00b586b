import { MCP_PARAM_PREFIX } from '../../policy/mcp-headers.js';

export type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;
export type OutgoingHeaders = Record<string, string | string[]>;

/** Connection-scoped headers (RFC 9110 §7.6.1), never relayed from the upstream's answer. */
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
 * Request headers forwarded to the upstream by default: what an MCP server needs to read the request
 * and answer it, and nothing that could carry identity or routing an upstream behind other proxies might trust.
 * Everything else a client sends is dropped; a route adds names with `upstream.forward_headers`. Content-Length is
 * counted by undici, Host set for the upstream, X-Request-Id set to the gateway's own request id.
 */
export const FORWARDED_REQUEST_HEADERS: readonly string[] = [
  'accept',
  'accept-encoding',
  'accept-language',
  'content-type',
  'user-agent',
  'last-event-id',
  // W3C Trace Context, so a trace continues through the gateway.
  'traceparent',
  'tracestate',
];

/** Request header name prefixes forwarded by default: the MCP transport's own headers (`Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`). */
export const FORWARDED_REQUEST_HEADER_PREFIXES: readonly string[] = ['mcp-'];

/**
 * Response headers never relayed to the client: challenges from the upstream's own authorization (the client
 * must only be steered to the gateway's authorization servers), cookies and Alt-Svc it would set
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

const FORWARDED_REQUEST_SET: ReadonlySet<string> = new Set(FORWARDED_REQUEST_HEADERS);
const NO_EXTRA_HEADERS: ReadonlySet<string> = new Set();

function hasPrefix(name: string, prefixes: readonly string[]): boolean {
  for (const prefix of prefixes) if (name.startsWith(prefix)) return true;
  return false;
}

const NO_CONNECTION_OPTIONS: ReadonlySet<string> = new Set();

/** `Connection` values seen, parsed: clients and upstreams send the same one or two (`keep-alive`) every time. */
const parsedConnectionValues = new Map<string, ReadonlySet<string>>();
const MAX_REMEMBERED_CONNECTION_VALUES = 64;

/** Header names the sender listed in `Connection`, which a proxy must not forward (RFC 9110 §7.6.1). */
function connectionOptions(value: string | string[] | undefined): ReadonlySet<string> {
  if (value === undefined) return NO_CONNECTION_OPTIONS;
  const list = Array.isArray(value) ? value.join(',') : value;
  let names = parsedConnectionValues.get(list);
  if (names === undefined) {
    names = new Set(list.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name.length > 0));
    if (parsedConnectionValues.size >= MAX_REMEMBERED_CONNECTION_VALUES) parsedConnectionValues.clear();
    parsedConnectionValues.set(list, names);
  }
  return names;
}

/**
 * Copies the headers `kept` accepts and `Connection` does not nominate, names lowercased. Node and undici give
 * lowercase names, so `Connection` is one property read; `Object.keys` instead of `Object.entries` saves an array
 * per header.
 */
function filterHeaders(headers: IncomingHeaders, kept: (name: string) => boolean): OutgoingHeaders {
  const nominated = connectionOptions(headers.connection);
  const copy: OutgoingHeaders = {};
  for (const rawName of Object.keys(headers)) {
    const value = headers[rawName];
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    if (nominated.has(name) || !kept(name)) continue;
    copy[name] = value;
  }
  return copy;
}

/**
 * The allowlist. A name containing `_` is never forwarded, even when configured: nginx ignores such names by
 * default and CGI/WSGI-style servers read `mcp_session_id` and `mcp-session-id` as one variable, so an underscore
 * twin could smuggle a value past every check here. `Mcp-Param-*` names are the exception: they spell a tool's
 * parameter names (`Mcp-Param-tenant_id`), and the decision refuses a POST carrying two of them that fold into
 * one (src/policy/mcp-headers.ts).
 */
function forwardedRequestHeader(name: string, extra: ReadonlySet<string>): boolean {
  if (name.startsWith(MCP_PARAM_PREFIX)) return true;
  if (name.includes('_')) return false;
  return FORWARDED_REQUEST_SET.has(name) || hasPrefix(name, FORWARDED_REQUEST_HEADER_PREFIXES) || extra.has(name);
}

function keptResponseHeader(name: string): boolean {
  return !STRIPPED_RESPONSE_HEADERS.has(name) && !hasPrefix(name, STRIPPED_RESPONSE_HEADER_PREFIXES);
}

/**
 * Headers sent to the upstream (ARCHITECTURE step 7): the client's headers on the allowlist (plus the route's
 * `upstream.forward_headers`, lowercase), then what the gateway sets itself (the upstream credential, the
 * identity assertion, the request id). Those go in last, so nothing the client sends — `Connection:
 * authorization` included — removes them.
 */
export function upstreamRequestHeaders(
  clientHeaders: IncomingHeaders,
  injected: Readonly<Record<string, string>>,
  extraForwarded: ReadonlySet<string> = NO_EXTRA_HEADERS,
): OutgoingHeaders {
  const headers = filterHeaders(clientHeaders, (name) => forwardedRequestHeader(name, extraForwarded));
  for (const name of Object.keys(injected)) headers[name.toLowerCase()] = injected[name] as string;
  return headers;
}

/** Headers relayed from the upstream's response to the client. */
export function upstreamResponseHeaders(upstreamHeaders: IncomingHeaders): OutgoingHeaders {
  return filterHeaders(upstreamHeaders, keptResponseHeader);
}
