import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startClientMetadataServer } from '../../src/client/client-metadata-server.js';
import { describeFlowEvent } from './describe-event.js';
import { createTracingFetch } from './flow-trace.js';
import { headlessClientMetadata, HeadlessOAuthClientProvider } from './headless-oauth-provider.js';
import { connectWithOAuth, type OAuthSession } from './oauth-session.js';

export interface DemoClientOptions {
  /** The gateway's MCP endpoint, e.g. http://127.0.0.1:8080/calc/mcp. */
  readonly url: URL;
  /** Identify with a Client ID Metadata Document served on loopback instead of registering dynamically. */
  readonly clientMetadataDocument: boolean;
  /** Receives each output line. */
  readonly print: (line: string) => void;
}

/** Loopback, and nothing listens there: the provider reads the authorization response from the redirect itself. */
const REDIRECT_URL = 'http://127.0.0.1/oauth/callback';

function textOf(result: unknown): string | undefined {
  const parsed = CallToolResultSchema.safeParse(result);
  if (!parsed.success || parsed.data.isError === true) return undefined;
  const first = parsed.data.content[0];
  return first?.type === 'text' ? first.text : undefined;
}

/** Calls a tool through the session (stepping up if the gateway asks) and checks its single text result. */
async function callTool(
  session: OAuthSession,
  name: string,
  args: Record<string, number>,
  expected: string,
  print: (line: string) => void,
): Promise<void> {
  const label = `${name}(${Object.values(args).join(', ')})`;
  const text = textOf(await session.authorized((client) => client.callTool({ name, arguments: args })));
  if (text !== expected) throw new Error(`${label} returned ${JSON.stringify(text)}, expected ${expected}`);
  print(`${label} = ${text}`);
}

/**
 * The whole MCP authorization flow with the official SDK client, headless: 401 → protected resource metadata →
 * authorization server metadata → registration (or a metadata document) → authorization with PKCE and resource →
 * token → tools/list → add → multiply, which needs calc:write and so steps up through a 403 and a second
 * authorization. Refresh tokens are not requested: with one, the SDK would refresh instead of stepping up.
 * Throws on any deviation; prints steps and results, never a token or a code.
 */
export async function runDemoClient(options: DemoClientOptions): Promise<void> {
  const { url, print } = options;
  let step = 0;
  const onEvent = (event: Parameters<typeof describeFlowEvent>[0]): void => {
    if (event.kind === 'mcp') print(`     ${describeFlowEvent(event)}`);
    else print(`${String((step += 1)).padStart(3)}. ${describeFlowEvent(event)}`);
  };
  const base = { redirectUrl: REDIRECT_URL, clientName: 'mcp-auth-gateway demo client', refreshTokens: false };
  const document = options.clientMetadataDocument ? await startClientMetadataServer(headlessClientMetadata(base)) : undefined;
  try {
    if (document) print(`client metadata document served at ${document.url}`);
    const provider = new HeadlessOAuthClientProvider({ ...base, clientMetadataUrl: document?.url, onEvent });
    const session = await connectWithOAuth(url, provider, { fetch: createTracingFetch(url, onEvent) });
    try {
      const { tools } = await session.authorized((client) => client.listTools());
      print(`tools/list: ${tools.map((tool) => tool.name).join(', ')}`);
      await callTool(session, 'add', { a: 2, b: 3 }, '5', print);
      await callTool(session, 'multiply', { x: 6, y: 7 }, '42', print);
      print(`granted scope now: "${provider.grantedScope ?? ''}"`);
      await session.transport.terminateSession();
    } finally {
      await session.close();
    }
  } finally {
    await document?.close();
  }
}
