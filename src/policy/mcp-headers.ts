import type { JsonRpcMessageFacts } from './jsonrpc.js';

/** The MCP 2026-07-28 (SEP-2243) request headers mirroring the body, as Node hands them over. */
export interface McpHeaderValues {
  readonly method: string | string[] | undefined;
  readonly name: string | string[] | undefined;
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A mirrored header value: plain visible ASCII as is, anything else as `=?base64?<base64 of UTF-8>?=`. Encoded
 * values must be canonical base64 of valid UTF-8; `undefined` otherwise (and for repeated header lines).
 */
export function decodeMcpHeaderValue(raw: string | string[]): string | undefined {
  if (typeof raw !== 'string') return undefined;
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

/** The body field `Mcp-Name` mirrors: params.name (tools/call, prompts/get) or params.uri (resources/*). */
function nameOf(message: JsonRpcMessageFacts): string | undefined {
  return message.toolName ?? message.resourceUri ?? message.promptName;
}

/**
 * True when a present `Mcp-Method` or `Mcp-Name` header says something other than the body (→ 400, JSON-RPC
 * -32020): an intermediary routing or metering on the header must not see a different request from the one the
 * upstream runs. A header naming something the body lacks is a mismatch too. Absent headers are not checked:
 * clients before 2026-07-28 do not send them, and every decision here uses the body.
 */
export function mcpHeadersMismatch(headers: McpHeaderValues, message: JsonRpcMessageFacts): boolean {
  const differs = (raw: string | string[] | undefined, bodyValue: string | undefined) =>
    raw !== undefined && (bodyValue === undefined || decodeMcpHeaderValue(raw) !== bodyValue);
  return differs(headers.method, message.method) || differs(headers.name, nameOf(message));
}
