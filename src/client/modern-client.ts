import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, UrlElicitationRequiredError, type ElicitRequestURLParams, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { encodeMcpHeaderValue } from '../policy/mcp-headers.js';
import { toolHeaderProblem, toolParamHeaders } from './tool-headers.js';

/**
 * The MCP 2026-07-28 wire, which the official SDK does not speak yet: no initialize handshake, every request a POST
 * carrying its protocol version, client identity and capabilities in `params._meta`, mirrored in the
 * `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers; the answer is JSON or an SSE stream
 * ending with it; results carry `resultType`, and a server needing the user's input answers `input_required`
 * (multi round-trip requests) instead of sending a request of its own.
 */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** The JSON-RPC errors only a 2026-07-28 server sends (transports, "Backward Compatibility"). */
const MODERN_ERRORS = { headerMismatch: -32020, missingCapability: -32021, unsupportedVersion: -32022 } as const;

/** Requests whose `Mcp-Name` mirrors a parameter, and which one. */
const NAMED_PARAMETERS: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

export interface ModernClientInfo {
  readonly name: string;
  readonly version: string;
}

/** What `server/discover` answers (server/discover, "DiscoverResult"). */
export interface DiscoverResult {
  readonly supportedVersions: readonly string[];
  readonly serverName?: string;
}

/** Which era a server speaks, from its answer to a modern request (versioning, "Backward Compatibility"). */
export type Era = { readonly era: 'modern'; readonly discovered: DiscoverResult } | { readonly era: 'legacy' };

interface JsonRpcAnswer {
  readonly id?: unknown;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isAnswer(value: unknown, id: number): value is JsonRpcAnswer {
  return isObject(value) && value.id === id && ('result' in value || 'error' in value);
}

/** The answer to request `id` in an SSE stream: its events are read until it comes, then the stream is closed. */
async function answerFromStream(body: ReadableStream<Uint8Array>, id: number): Promise<JsonRpcAnswer | undefined> {
  const events = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  const reader = events.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return undefined;
      let message: unknown;
      try {
        message = JSON.parse(value.data);
      } catch {
        continue;
      }
      if (isAnswer(message, id)) return message;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** The answer to request `id`, JSON or SSE; undefined when the body holds none (a legacy server's plain error). */
async function answerOf(response: Response, id: number): Promise<JsonRpcAnswer | undefined> {
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('text/event-stream') && response.body !== null) return answerFromStream(response.body, id);
  const text = await response.text();
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) && ('result' in parsed || 'error' in parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The URL elicitations of an `input_required` result (multi round-trip requests: `elicitation/create`, mode url). */
function urlElicitations(result: Record<string, unknown>): ElicitRequestURLParams[] {
  const requests = isObject(result.inputRequests) ? Object.entries(result.inputRequests) : [];
  return requests.flatMap(([elicitationId, request]) => {
    if (!isObject(request) || request.method !== 'elicitation/create' || !isObject(request.params)) return [];
    const { mode, url, message } = request.params;
    return mode === 'url' && typeof url === 'string' ? [{ mode, url, message: typeof message === 'string' ? message : '', elicitationId }] : [];
  });
}

/** One client of one server on the 2026-07-28 wire; requests go through `fetch`, which adds the token. */
export class ModernClient {
  readonly #url: URL;
  readonly #fetch: FetchLike;
  readonly #clientInfo: ModernClientInfo;
  #nextId = 1;
  /** Input schemas by tool name, from the last `tools/list`: `tools/call` mirrors annotated arguments. */
  readonly #schemas = new Map<string, unknown>();

  constructor(url: URL, fetch: FetchLike, clientInfo: ModernClientInfo) {
    this.#url = url;
    this.#fetch = fetch;
    this.#clientInfo = clientInfo;
  }

  /** Sends one request and resolves with the HTTP response and the JSON-RPC answer in it, if any. */
  async #send(method: string, params: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ response: Response; answer?: JsonRpcAnswer }> {
    const id = this.#nextId++;
    const named = NAMED_PARAMETERS[method];
    const name = named === undefined ? undefined : params[named];
    const response = await this.#fetch(this.#url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
        'mcp-method': method,
        ...(typeof name === 'string' ? { 'mcp-name': encodeMcpHeaderValue(name) } : {}),
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method,
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION,
            'io.modelcontextprotocol/clientInfo': this.#clientInfo,
            // URL elicitation: a server that needs the user somewhere else says where (printed, never opened).
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } },
          },
        },
      }),
    });
    return { response, answer: await answerOf(response, id) };
  }

  /** A request's result; a JSON-RPC error, an `input_required` result or an answer without one throws. */
  async #request(method: string, params: Record<string, unknown> = {}, headers?: Record<string, string>): Promise<Record<string, unknown>> {
    const { response, answer } = await this.#send(method, params, headers);
    if (answer?.error !== undefined) throw McpError.fromError(answer.error.code, answer.error.message, answer.error.data);
    if (answer?.result === undefined) throw new Error(`${method}: HTTP ${response.status} without a JSON-RPC answer`);
    if (answer.result.resultType === 'input_required') {
      const elicitations = urlElicitations(answer.result);
      if (elicitations.length > 0) throw new UrlElicitationRequiredError(elicitations);
      throw new Error(`${method}: the server asks for input (sampling, roots or a form) that login cannot give`);
    }
    return answer.result;
  }

  /**
   * `server/discover`, which tells the era: a result naming 2026-07-28 is modern; an UnsupportedProtocolVersion error
   * naming 2026-07-28 is retried once, one naming only older versions is legacy, as is any other answer (a 4xx
   * without a modern error, method not found). A 401, or a 403 with a challenge, throws (the caller authorizes and
   * asks again); so does a modern error about the request itself. A 403 without a challenge is not about the token:
   * a gateway that needs the user's consent first may refuse a `server/discover` so and give its link only to a
   * 2025-11-25 `initialize`.
   */
  async discover(retried = false): Promise<Era> {
    const { response, answer } = await this.#send('server/discover', {});
    if (response.status === 401 || (response.status === 403 && response.headers.has('www-authenticate'))) {
      throw new Error(`server/discover: HTTP ${response.status}`);
    }
    const { result, error } = answer ?? {};
    if (result !== undefined && Array.isArray(result.supportedVersions) && result.supportedVersions.includes(MODERN_PROTOCOL_VERSION)) {
      const meta = isObject(result._meta) ? result._meta['io.modelcontextprotocol/serverInfo'] : undefined;
      const serverName = isObject(meta) && typeof meta.name === 'string' ? meta.name : undefined;
      return { era: 'modern', discovered: { supportedVersions: result.supportedVersions.filter((version) => typeof version === 'string'), ...(serverName === undefined ? {} : { serverName }) } };
    }
    if (error?.code === MODERN_ERRORS.unsupportedVersion) {
      const supported = isObject(error.data) && Array.isArray(error.data.supported) ? error.data.supported.filter((version) => typeof version === 'string') : [];
      // A modern server naming the version this client speaks: retry once with it (versioning, "Protocol Version
      // Negotiation"); naming only older ones: it serves those through initialize.
      if (!supported.includes(MODERN_PROTOCOL_VERSION)) return { era: 'legacy' };
      if (!retried) return this.discover(true);
      throw McpError.fromError(error.code, error.message, error.data);
    }
    if (error?.code === MODERN_ERRORS.headerMismatch || error?.code === MODERN_ERRORS.missingCapability) {
      throw McpError.fromError(error.code, error.message, error.data);
    }
    return { era: 'legacy' };
  }

  /** `tools/list`, without the tools whose `x-mcp-header` annotations are invalid (they must be dropped). */
  async listTools(onDropped: (tool: string, reason: string) => void): Promise<Tool[]> {
    const result = await this.#request('tools/list');
    const tools = (Array.isArray(result.tools) ? result.tools : []) as Tool[];
    this.#schemas.clear();
    return tools.filter((tool) => {
      const problem = toolHeaderProblem(tool.inputSchema);
      if (problem !== undefined) {
        onDropped(tool.name, problem);
        return false;
      }
      this.#schemas.set(tool.name, tool.inputSchema);
      return true;
    });
  }

  /** `tools/call`, its annotated arguments mirrored into `Mcp-Param-*` headers. */
  async callTool(name: string, args: Record<string, unknown>): Promise<{ isError?: boolean; content?: unknown }> {
    const headers = toolParamHeaders(this.#schemas.get(name), args);
    return this.#request('tools/call', { name, arguments: args }, headers);
  }
}
