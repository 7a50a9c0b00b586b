import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { bearerChallenge, parseWwwAuthenticate, type Challenge } from './www-authenticate.js';

/** A 401 or 403 the server answered to an MCP request, with its Bearer challenge when one parsed. */
export interface RefusedRequest {
  readonly status: 401 | 403;
  readonly challenge?: Challenge;
}

const CLIENT_INFO = { name: 'mcp-auth-gateway-login', version: '1' };

/**
 * The official SDK client on Streamable HTTP, with the bearer token set from outside and every 401/403 to a POST
 * kept for the caller: the SDK transport runs without an auth provider, so authorization (and its checks) stays in
 * `login`, which reads the refusal, authorizes and runs the operation again.
 */
export class McpSession {
  readonly #url: URL;
  readonly #baseFetch: FetchLike;
  #token: string | undefined;
  #refused: RefusedRequest | undefined;
  #answered = false;
  #client: Client | undefined;
  #transport: StreamableHTTPClientTransport | undefined;

  constructor(url: URL, baseFetch: FetchLike = fetch) {
    this.#url = url;
    this.#baseFetch = baseFetch;
  }

  set token(token: string | undefined) {
    this.#token = token;
  }

  readonly #fetch: FetchLike = async (url, init) => {
    const headers = new Headers(init?.headers);
    if (this.#token !== undefined) headers.set('authorization', `Bearer ${this.#token}`);
    const response = await this.#baseFetch(url, { ...init, headers });
    this.#answered = true;
    if ((init?.method ?? 'GET') === 'POST' && (response.status === 401 || response.status === 403)) {
      const header = response.headers.get('www-authenticate');
      const parsed = header === null ? undefined : parseWwwAuthenticate(header);
      const challenge = parsed?.ok === true ? bearerChallenge(parsed.challenges) : undefined;
      this.#refused = { status: response.status, ...(challenge === undefined ? {} : { challenge }) };
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

  /** Runs `initialize` on a fresh client and transport (a failed connect leaves the old ones closed). */
  async connect(): Promise<void> {
    await this.close();
    this.#refused = undefined;
    const transport = new StreamableHTTPClientTransport(this.#url, { fetch: this.#fetch });
    const client = new Client(CLIENT_INFO);
    // Errors on the optional GET stream surface here; operations report their own failures.
    client.onerror = () => undefined;
    await client.connect(transport);
    this.#client = client;
    this.#transport = transport;
  }

  get client(): Client {
    if (this.#client === undefined) throw new Error('not connected');
    return this.#client;
  }

  /** Ends the MCP session (DELETE, when the server gave one) and the transport. */
  async close(): Promise<void> {
    const [client, transport] = [this.#client, this.#transport];
    this.#client = undefined;
    this.#transport = undefined;
    await transport?.terminateSession().catch(() => undefined);
    await client?.close();
  }
}
