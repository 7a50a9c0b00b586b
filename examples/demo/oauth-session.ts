import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { HeadlessOAuthClientProvider } from './headless-oauth-provider.js';

export interface OAuthSession {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  /**
   * Runs one MCP operation; when the SDK stops it to authorize (a 401, or a 403 insufficient_scope step-up),
   * completes that authorization with `finishAuth` and runs the operation once more.
   */
  authorized<T>(operation: (client: Client) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'mcp-auth-gateway-demo-client', version: '1.0.0' };

/**
 * Connects the official SDK client to `url` with `provider`: the first attempt runs into the 401, the SDK
 * discovers, registers and starts the authorization, the provider completes it headlessly; the code is
 * exchanged with `finishAuth` and the client connects again on a fresh transport, as the SDK's own examples do.
 */
export async function connectWithOAuth(
  url: URL,
  provider: HeadlessOAuthClientProvider,
  options: { readonly fetch?: FetchLike; readonly capabilities?: ClientCapabilities } = {},
): Promise<OAuthSession> {
  const open = async (transport: StreamableHTTPClientTransport): Promise<Client> => {
    const client = new Client(CLIENT_INFO, options.capabilities && { capabilities: options.capabilities });
    await client.connect(transport);
    return client;
  };
  const newTransport = () => new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: options.fetch });

  let transport = newTransport();
  let client: Client;
  try {
    client = await open(transport);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    // The failed transport holds the challenge's resource metadata URL and scope that the exchange must use.
    await finishAuthorization(transport, provider);
    transport = newTransport();
    client = await open(transport);
  }

  return {
    client,
    transport,
    async authorized(operation) {
      try {
        return await operation(client);
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
        await finishAuthorization(transport, provider);
        return operation(client);
      }
    },
    close: () => client.close(),
  };
}

function finishAuthorization(transport: StreamableHTTPClientTransport, provider: HeadlessOAuthClientProvider): Promise<void> {
  return transport.finishAuth(provider.takeAuthorizationCode());
}
