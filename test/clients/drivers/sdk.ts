import { HeadlessOAuthClientProvider } from '../../../examples/demo/headless-oauth-provider.js';
import { connectWithOAuth } from '../../../examples/demo/oauth-session.js';
import { packageVersion, type ClientDriver, type MatrixContext } from '../context.js';
import { pass, fail, type Cell, type RouteKind } from '../matrix.js';
import { perUserGrant } from './consent.js';
import { firstText } from './results.js';

const REDIRECT_URL = 'http://127.0.0.1/matrix/callback';

/**
 * The official TypeScript SDK client (`StreamableHTTPClientTransport` + an `OAuthClientProvider`, the demo
 * client's), which answers a 403 insufficient_scope itself: with a refresh token it refreshes, without one it
 * authorizes again for the challenged scope.
 */
/** One tool call on a fresh client of `url` (OAuth at the demo's authorization server), its first text. */
async function callOnce(url: URL, client: string, name: string, args: Record<string, number>): Promise<string> {
  const provider = new HeadlessOAuthClientProvider({ redirectUrl: REDIRECT_URL, clientName: client, refreshTokens: false });
  const session = await connectWithOAuth(url, provider);
  try {
    return firstText(await session.client.callTool({ name, arguments: args })) ?? '';
  } finally {
    await session.close();
  }
}

/** The introspection and per-user grant routes, each with a client of its own (no URL elicitation declared). */
async function otherRoutes(context: MatrixContext, client: string): Promise<Partial<Record<RouteKind, Cell>>> {
  const introspected = await callOnce(context.opaqueUrl, client, 'add', { a: 2, b: 3 }).catch((error: unknown) => String(error));
  // One provider across both attempts: the person's client keeps its token while they connect their account.
  const provider = new HeadlessOAuthClientProvider({ redirectUrl: REDIRECT_URL, clientName: client, refreshTokens: false });
  const listNotes = async () => {
    const session = await connectWithOAuth(context.notesUrl, provider);
    try {
      return firstText(await session.client.callTool({ name: 'list_notes', arguments: {} })) ?? '';
    } finally {
      await session.close();
    }
  };
  return {
    introspection: introspected === '5' ? pass() : fail(`add answered "${introspected.slice(0, 120)}"`),
    'user-grant': await perUserGrant(context.notesUrl, listNotes),
  };
}

function sdkClient(client: string, options: { refreshTokens: boolean; route: (context: MatrixContext) => URL; allRoutes?: boolean }): ClientDriver {
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
      return options.allRoutes === true ? { ...outcome, routes: await otherRoutes(context, client) } : outcome;
    },
  };
}

export const sdkWithoutRefreshTokens = sdkClient('official TypeScript SDK client, no refresh token', {
  refreshTokens: false,
  route: (context) => context.calcUrl,
  allRoutes: true,
});

export const sdkWithRefreshTokens = sdkClient('official TypeScript SDK client, refresh token', {
  refreshTokens: true,
  route: (context) => context.calcUrl,
});

export const sdkWithRefreshTokensUpfront: ClientDriver = {
  ...sdkClient('official TypeScript SDK client, refresh token, upfront_scopes route', { refreshTokens: true, route: (context) => context.upfrontUrl }),
  mainRoute: 'upfront',
};
