import { HeadlessOAuthClientProvider } from '../../../examples/demo/headless-oauth-provider.js';
import { connectWithOAuth } from '../../../examples/demo/oauth-session.js';
import { packageVersion, type ClientDriver, type MatrixContext } from '../context.js';
import { otherRouteKinds, type ToolCall } from './route-kinds.js';
import { firstText } from './results.js';

const REDIRECT_URL = 'http://127.0.0.1/matrix/callback';

/**
 * The official TypeScript SDK client (`StreamableHTTPClientTransport` + an `OAuthClientProvider`, the demo
 * client's), which answers a 403 insufficient_scope itself: with a refresh token it refreshes, without one it
 * authorizes again for the challenged scope.
 */
/** Tool calls of the SDK client, one provider per session name: a fresh OAuth client per route, as a user adds one. */
function sdkToolCall(client: string): ToolCall {
  const providers = new Map<string, HeadlessOAuthClientProvider>();
  return async (url, tool, args, name) => {
    const provider = providers.get(name) ?? new HeadlessOAuthClientProvider({ redirectUrl: REDIRECT_URL, clientName: client, refreshTokens: false });
    providers.set(name, provider);
    const session = await connectWithOAuth(url, provider);
    try {
      return firstText(await session.client.callTool({ name: tool, arguments: args })) ?? '';
    } finally {
      await session.close();
    }
  };
}

function sdkClient(client: string, options: { refreshTokens: boolean; route: (context: MatrixContext) => URL }): ClientDriver {
  return {
    client,
    version: () => packageVersion('@modelcontextprotocol/sdk'),
    timeoutMs: 30_000,
    async run(context) {
      const provider = new HeadlessOAuthClientProvider({
        redirectUrl: REDIRECT_URL,
        clientName: client,
        refreshTokens: options.refreshTokens,
      });
      const session = await connectWithOAuth(options.route(context), provider);
      let outcome: { results: { added: boolean; multiplied: boolean }; notes?: string[] };
      try {
        const call = (name: string, args: Record<string, number>) => session.authorized((mcp) => mcp.callTool({ name, arguments: args }));
        const added = firstText(await call('add', { a: 2, b: 3 })) === '5';
        try {
          outcome = { results: { added, multiplied: firstText(await call('multiply', { x: 6, y: 7 })) === '42' } };
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          outcome = { results: { added, multiplied: false }, notes: [`multiply failed: "${reason.slice(0, 120)}"`] };
        }
      } finally {
        await session.close();
      }
      return options.route(context) === context.calcUrl ? { ...outcome, routes: await otherRouteKinds(context, sdkToolCall(client)) } : outcome;
    },
  };
}

export const sdkWithoutRefreshTokens = sdkClient('official TypeScript SDK client, no refresh token', {
  refreshTokens: false,
  route: (context) => context.calcUrl,
});

export const sdkWithRefreshTokens = sdkClient('official TypeScript SDK client, refresh token', {
  refreshTokens: true,
  route: (context) => context.calcUrl,
});

export const sdkWithRefreshTokensUpfront: ClientDriver = {
  ...sdkClient('official TypeScript SDK client, refresh token, upfront_scopes route', { refreshTokens: true, route: (context) => context.upfrontUrl }),
  mainRoute: 'upfront',
};
