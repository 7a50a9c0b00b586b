import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { dpopResourceFetch, type DpopSigner } from './dpop.js';
import { ModernClient, MODERN_PROTOCOL_VERSION } from './modern-client.js';
import { bearerChallenge, parseWwwAuthenticate, type Challenge } from './www-authenticate.js';

/** A 401 or 403 the server answered to an MCP request, with its Bearer (else DPoP) challenge when one parsed. */
export interface RefusedRequest {
  readonly status: 401 | 403;
  readonly challenge?: Challenge;
  /** The `DPoP` challenge beside it, when the server sent one: it takes DPoP-bound tokens (RFC 9449 §7.1). */
  readonly dpopChallenge?: Challenge;
}

const CLIENT_INFO = { name: 'mcp-auth-gateway-login', version: '1' };
/** URL elicitation declared: a server that needs the user somewhere else says where (printed, never opened). */
const CAPABILITIES = { elicitation: { url: {} } };

/** A tool's answer, as far as `login` reports it. */
export interface ToolResult {
  readonly isError?: boolean;
  readonly content?: unknown;
}

/** A resource that takes only DPoP-bound tokens challenges with `DPoP` alone (RFC 9449 §7.1). */
function dpopChallenge(challenges: readonly Challenge[]): Challenge | undefined {
  return challenges.find((challenge) => challenge.scheme.toLowerCase() === 'dpop');
}

/** Which protocol a connected session speaks: 2026-07-28 (stateless) or the SDK's initialize handshake. */
type Connection =
  | { readonly wire: 'modern'; readonly client: ModernClient; readonly serverName?: string }
  | { readonly wire: 'legacy'; readonly client: Client; readonly transport: StreamableHTTPClientTransport };

/**
 * An MCP client session on Streamable HTTP, with the bearer token set from outside and every 401/403 to a POST kept
 * for the caller: authorization (and its checks) stays in `login`, which reads the refusal, authorizes and runs the
 * operation again. It speaks MCP 2026-07-28 when the server does (a `server/discover` first, as the transport's
 * backward compatibility rules describe), else the official SDK client's 2025-11-25 handshake.
 */
export class McpSession {
  readonly #url: URL;
  readonly #baseFetch: FetchLike;
  #token: string | undefined;
  #dpop: DpopSigner | undefined;
  #refused: RefusedRequest | undefined;
  #answered = false;
  #connection: Connection | undefined;

  constructor(url: URL, baseFetch: FetchLike = fetch) {
    this.#url = url;
    this.#baseFetch = baseFetch;
  }

  set token(token: string | undefined) {
    this.#token = token;
  }

  /** The key of a DPoP-bound token: the token then goes as `Authorization: DPoP` with a proof (RFC 9449 §7.1). */
  set dpop(signer: DpopSigner | undefined) {
    this.#dpop = signer;
  }

  readonly #send: FetchLike = (url, init) => {
    if (this.#token !== undefined && this.#dpop !== undefined) return dpopResourceFetch(this.#dpop, this.#baseFetch, this.#token, url, init);
    const headers = new Headers(init?.headers);
    if (this.#token !== undefined) headers.set('authorization', `Bearer ${this.#token}`);
    return this.#baseFetch(url, { ...init, headers });
  };

  readonly #fetch: FetchLike = async (url, init) => {
    const response = await this.#send(url, init);
    this.#answered = true;
    if ((init?.method ?? 'GET') === 'POST' && (response.status === 401 || response.status === 403)) {
      const header = response.headers.get('www-authenticate');
      const parsed = header === null ? undefined : parseWwwAuthenticate(header);
      const dpop = parsed?.ok === true ? dpopChallenge(parsed.challenges) : undefined;
      const challenge = parsed?.ok === true ? (bearerChallenge(parsed.challenges) ?? dpop) : undefined;
      this.#refused = { status: response.status, ...(challenge === undefined ? {} : { challenge }), ...(dpop === undefined ? {} : { dpopChallenge: dpop }) };
    }
    return response;
  };

  /** Whether the server ever answered with HTTP (false: unreachable). */
  get answered(): boolean {
    return this.#answered;
  }

  /** The refusal behind the last failed operation, once. */
  takeRefusal(): RefusedRequest | undefined {
    const refused = this.#refused;
    this.#refused = undefined;
    return refused;
  }

  /**
   * Finds the server's protocol and starts a session: 2026-07-28 when `server/discover` says so, else `initialize` on
   * a fresh SDK client and transport (a failed connect leaves the old ones closed).
   */
  async connect(): Promise<void> {
    await this.close();
    this.#refused = undefined;
    const modern = new ModernClient(this.#url, this.#fetch, CLIENT_INFO);
    const era = await modern.discover();
    // What the probe was refused is no refusal of the session (see ModernClient.discover).
    this.#refused = undefined;
    if (era.era === 'modern') {
      this.#connection = { wire: 'modern', client: modern, ...(era.discovered.serverName === undefined ? {} : { serverName: era.discovered.serverName }) };
      return;
    }
    const transport = new StreamableHTTPClientTransport(this.#url, { fetch: this.#fetch });
    const client = new Client(CLIENT_INFO, { capabilities: CAPABILITIES });
    // Errors on the optional GET stream surface here; operations report their own failures.
    client.onerror = () => undefined;
    await client.connect(transport);
    this.#connection = { wire: 'legacy', client, transport };
  }

  #connected(): Connection {
    if (this.#connection === undefined) throw new Error('not connected');
    return this.#connection;
  }

  /** `MCP 2026-07-28` or the version the SDK negotiated, and the server's name. */
  describe(): { readonly protocol: string; readonly serverName?: string } {
    const connection = this.#connected();
    if (connection.wire === 'modern') return { protocol: MODERN_PROTOCOL_VERSION, serverName: connection.serverName };
    return { protocol: connection.transport.protocolVersion ?? 'unknown', serverName: connection.client.getServerVersion()?.name };
  }

  /** `tools/list`; on 2026-07-28 without tools whose header annotations are invalid (`onDropped` says which). */
  async listTools(onDropped: (tool: string, reason: string) => void): Promise<Tool[]> {
    const connection = this.#connected();
    if (connection.wire === 'modern') return connection.client.listTools(onDropped);
    return (await connection.client.listTools()).tools;
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const connection = this.#connected();
    if (connection.wire === 'modern') return connection.client.callTool(name, args);
    return (await connection.client.callTool({ name, arguments: args })) as ToolResult;
  }

  /** Ends the MCP session (DELETE, when a 2025-11-25 server gave one) and the transport. */
  async close(): Promise<void> {
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection?.wire !== 'legacy') return;
    await connection.transport.terminateSession().catch(() => undefined);
    await connection.client.close();
  }
}
