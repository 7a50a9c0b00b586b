import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { HeadlessOAuthClientProvider } from '../../../examples/demo/headless-oauth-provider.js';
import { packageVersion, type ClientDriver } from '../context.js';
import { otherRouteKinds, type ToolCall } from './route-kinds.js';
import { firstText } from './results.js';

const PACKAGE = '@modelcontextprotocol/client';
const REDIRECT_URL = 'http://127.0.0.1/matrix/callback';

/** A connected SDK v2 client and how to finish an authorization it stopped for. */
export interface Connection {
  readonly client: Client;
  /** Runs one operation; when the SDK stops it to authorize (401, or 403 insufficient_scope), finishes that and runs it again. */
  authorized<T>(operation: (client: Client) => Promise<T>): Promise<T>;
}

/**
 * The official SDK v2 client (`@modelcontextprotocol/client`) as an application uses it: `versionNegotiation: auto`
 * (a `server/discover` first, MCP 2026-07-28 when the server offers it, else the 2025-11-25 `initialize`), OAuth by
 * its `StreamableHTTPClientTransport` with an `OAuthClientProvider`, and `finishAuth` with the whole callback query
 * (it checks RFC 9207 `iss` itself).
 */
export async function connectSdkV2(url: URL, provider: HeadlessOAuthClientProvider, clientName: string): Promise<Connection> {
  let transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const open = async () => {
    const client = new Client({ name: clientName, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(transport);
    return client;
  };
  let client: Client;
  try {
    client = await open();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await transport.finishAuth(provider.takeCallbackParams());
    transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    client = await open();
  }
  return {
    client,
    async authorized(operation) {
      try {
        return await operation(client);
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
        await transport.finishAuth(provider.takeCallbackParams());
        return operation(client);
      }
    },
  };
}

/** Tool calls of the SDK v2 client, one provider per session name: a fresh OAuth client per route, as a user adds one. */
function sdkV2ToolCall(clientName: string): ToolCall {
  const providers = new Map<string, HeadlessOAuthClientProvider>();
  return async (url, tool, args, name) => {
    const provider = providers.get(name) ?? new HeadlessOAuthClientProvider({ redirectUrl: REDIRECT_URL, clientName, refreshTokens: false });
    providers.set(name, provider);
    const { client } = await connectSdkV2(url, provider, clientName);
    try {
      return firstText(await client.callTool({ name: tool, arguments: args })) ?? '';
    } finally {
      await client.close();
    }
  };
}

function sdkV2Client(clientName: string, refreshTokens: boolean): ClientDriver {
  return {
    client: clientName,
    version: () => packageVersion(PACKAGE),
    timeoutMs: 45_000,
    async run(context) {
      const provider = new HeadlessOAuthClientProvider({ redirectUrl: REDIRECT_URL, clientName, refreshTokens });
      const connection = await connectSdkV2(context.calcUrl, provider, clientName);
      const notes: string[] = [];
      const call = (name: string, args: Record<string, number>) => connection.authorized((mcp) => mcp.callTool({ name, arguments: args }));
      const multiply = async () => {
        try {
          return firstText(await call('multiply', { x: 6, y: 7 })) === '42';
        } catch (error) {
          notes.push(`multiply failed: "${(error instanceof Error ? error.message : String(error)).slice(0, 120)}"`);
          return false;
        }
      };
      try {
        const added = firstText(await call('add', { a: 2, b: 3 })) === '5';
        const multiplied = await multiply();
        notes.push(`spoke MCP ${connection.client.getNegotiatedProtocolVersion() ?? 'unknown'} after server/discover`);
        return { results: { added, multiplied }, notes, routes: await otherRouteKinds(context, sdkV2ToolCall(clientName)) };
      } finally {
        await connection.client.close();
      }
    },
  };
}

export const sdkV2WithoutRefreshTokens = sdkV2Client('official TypeScript SDK v2 client, no refresh token', false);
export const sdkV2WithRefreshTokens = sdkV2Client('official TypeScript SDK v2 client, refresh token', true);
