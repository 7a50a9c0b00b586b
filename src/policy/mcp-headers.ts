import type { JsonRpcMessageFacts } from './jsonrpc.js';

/**
 * The request metadata headers of MCP's Streamable HTTP transport (SEP-2243): `MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` mirror fields of the JSON-RPC body so intermediaries can route on
 * them. Every decision here uses the body; these checks make sure nothing beside the gateway sees a different
 * request from the one the upstream runs.
 */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Why a request's mirrored headers are refused (→ 400, JSON-RPC -32020 HeaderMismatch). */
export type HeaderMismatchReason =
  | 'mcp_method_missing'
  | 'mcp_method_differs'
  | 'mcp_name_missing'
  | 'mcp_name_differs'
  | 'protocol_version_differs'
  | 'mcp_param_invalid'
  | 'mcp_param_twins';

/** `Mcp-Param-<name>`, lower case: the prefix of the headers that mirror a tool's arguments. */
export const MCP_PARAM_PREFIX = 'mcp-param-';

/** The first revision whose requests must carry the mirrored headers. */
export const MIRRORED_HEADERS_SINCE = '2026-07-28';

const VERSION = /^\d{4}-\d{2}-\d{2}$/;

/** The methods whose `Mcp-Name` mirrors the body (`params.name` / `params.uri`); other methods' names are not compared. */
const NAMED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'resources/read', 'prompts/get']);

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** RFC 9110 §5.5 field value: visible ASCII, with spaces and tabs only inside. */
const FIELD_VALUE = /^(?:[\x21-\x7E](?:[\x20-\x7E\t]*[\x21-\x7E])?)?$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A mirrored header value: plain visible ASCII as is, anything else as `=?base64?<base64 of UTF-8>?=`. Encoded
 * values must be canonical base64 of valid UTF-8; `undefined` otherwise (and for repeated header lines, and for
 * characters a field value may not carry).
 */
export function decodeMcpHeaderValue(raw: string | string[]): string | undefined {
  if (typeof raw !== 'string' || !FIELD_VALUE.test(raw)) return undefined;
  if (!raw.startsWith(SENTINEL_PREFIX) || !raw.endsWith(SENTINEL_SUFFIX) || raw.length < SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length) {
    return raw;
  }
  const payload = raw.slice(SENTINEL_PREFIX.length, raw.length - SENTINEL_SUFFIX.length);
  if (!BASE64.test(payload)) return undefined;
  try {
    return UTF8.decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * The header form of a mirrored value (the inverse of `decodeMcpHeaderValue`, for clients): as is when it is a
 * field value with no surrounding whitespace and does not look like the sentinel, else the base64 sentinel of its
 * UTF-8 (MCP 2026-07-28 transports, "Value Encoding").
 */
export function encodeMcpHeaderValue(value: string): string {
  const plain = FIELD_VALUE.test(value) && !(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX));
  return plain ? value : `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/**
 * The protocol revision a request declares in `MCP-Protocol-Version`, when it is one (`YYYY-MM-DD`); a request
 * without it, or with something else there, is left to the upstream, which answers unsupported versions itself.
 */
export function declaredProtocolVersion(headers: RequestHeaders): string | undefined {
  const value = headers['mcp-protocol-version'];
  return typeof value === 'string' && VERSION.test(value) ? value : undefined;
}

/** Requests declaring 2026-07-28 or later must carry the mirrored headers; older ones may. */
export function requiresMirroredHeaders(version: string | undefined): boolean {
  return version !== undefined && version >= MIRRORED_HEADERS_SINCE;
}

/** The body field `Mcp-Name` mirrors, for the methods where it is compared. */
function nameOf(message: JsonRpcMessageFacts): string | undefined {
  return message.toolName ?? message.resourceUri ?? message.promptName;
}

function isRequest(message: JsonRpcMessageFacts): boolean {
  return message.method !== undefined && message.id !== undefined;
}

/**
 * Every `Mcp-Param-*` value must be a valid field value, and a sentinel one must decode. Names keep the parameter's
 * `_` (the proxy forwards them), so two names that differ only in `_` against `-` (`Mcp-Param-tenant_id`,
 * `Mcp-Param-tenant-id`) are refused: CGI/WSGI-style servers fold them into one variable, and which value wins
 * would be theirs to pick.
 */
export function paramHeadersProblem(headers: RequestHeaders): HeaderMismatchReason | undefined {
  // Made on the first Mcp-Param header: most requests carry none.
  let folded: Set<string> | undefined;
  for (const name in headers) {
    const value = headers[name];
    if (!name.startsWith(MCP_PARAM_PREFIX) || value === undefined) continue;
    if (decodeMcpHeaderValue(value) === undefined) return 'mcp_param_invalid';
    const key = name.replaceAll('_', '-');
    folded ??= new Set();
    if (folded.has(key)) return 'mcp_param_twins';
    folded.add(key);
  }
  return undefined;
}

/**
 * Why the mirrored headers of a POST are refused, or `undefined` when they hold (MCP 2026-07-28 Server
 * Validation). Present headers must equal the body, whatever revision the request declares: `Mcp-Method` the
 * body's method, `Mcp-Name` (for tools/call, resources/read, prompts/get only) its name or URI, after decoding the
 * base64 sentinel; `Mcp-Param-*` values must be valid and no two of their names fold into one (their match with
 * the tool's arguments needs the tool's schema: the upstream checks it); a `_meta` protocol version in the body
 * must equal `MCP-Protocol-Version`.
 * Requests declaring 2026-07-28 or later must also carry `Mcp-Method` (requests) and `Mcp-Name` (those three
 * methods).
 */
export function mirroredHeadersProblem(headers: RequestHeaders, message: JsonRpcMessageFacts): HeaderMismatchReason | undefined {
  const version = declaredProtocolVersion(headers);
  const modern = requiresMirroredHeaders(version);
  const method = headers['mcp-method'];
  if (method === undefined) {
    if (modern && isRequest(message)) return 'mcp_method_missing';
  } else if (message.method === undefined || decodeMcpHeaderValue(method) !== message.method) {
    return 'mcp_method_differs';
  }
  if (message.method !== undefined && NAMED_METHODS.has(message.method)) {
    const name = headers['mcp-name'];
    if (name === undefined) {
      if (modern) return 'mcp_name_missing';
    } else if (decodeMcpHeaderValue(name) !== nameOf(message)) {
      return 'mcp_name_differs';
    }
  }
  // Also without the header: a body declaring a revision under another header would dodge the checks above.
  if (message.protocolVersion !== undefined && message.protocolVersion !== headers['mcp-protocol-version']) {
    return 'protocol_version_differs';
  }
  return paramHeadersProblem(headers);
}
