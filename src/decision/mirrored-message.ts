import { GatewayError } from './refusal.js';
import type { JsonRpcMessageFacts } from '../policy/jsonrpc.js';
import { decodeMcpHeaderValue } from '../policy/mcp-headers.js';
import type { HeaderMap } from './facts.js';

/** The methods whose target MCP 2026-07-28 mirrors in `Mcp-Name`, and the message field it stands for. */
const NAMED: ReadonlyMap<string, 'toolName' | 'resourceUri' | 'promptName'> = new Map([
  ['tools/call', 'toolName'],
  ['resources/read', 'resourceUri'],
  ['prompts/get', 'promptName'],
]);

/**
 * The operation of a request whose body the decision does not see, read from the headers MCP 2026-07-28 requires
 * to mirror it (`Mcp-Method` on every request, `Mcp-Name` for tools/call, resources/read, prompts/get). That
 * revision obliges the upstream MCP server to refuse a request whose headers contradict its body, so what is
 * decided here is what runs. A missing or undecodable header → 400 -32020.
 */
export function messageFromMirroredHeaders(headers: HeaderMap): JsonRpcMessageFacts {
  const method = decodeHeader(headers['mcp-method']);
  if (method === undefined) throw new GatewayError('header_mismatch', { reason: 'mcp_method_missing' });
  const field = NAMED.get(method);
  if (field === undefined) return { method, id: undefined };
  const name = decodeHeader(headers['mcp-name']);
  if (name === undefined) throw new GatewayError('header_mismatch', { reason: 'mcp_name_missing' });
  return { method, id: undefined, [field]: name };
}

function decodeHeader(value: string | string[] | undefined): string | undefined {
  return value === undefined ? undefined : decodeMcpHeaderValue(value);
}
