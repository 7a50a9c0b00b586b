import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createTracingFetch, type FlowEvent } from '../../examples/demo/flow-trace.js';
import { HeadlessOAuthClientProvider, type HeadlessOAuthOptions } from '../../examples/demo/headless-oauth-provider.js';
import { connectWithOAuth, type OAuthSession } from '../../examples/demo/oauth-session.js';

export const REDIRECT_URL = 'http://127.0.0.1/e2e/callback';

export interface TracedClient {
  readonly events: FlowEvent[];
  readonly provider: HeadlessOAuthClientProvider;
  readonly session: OAuthSession;
  /** Every access token the client obtained, in order, for the assertions that none leaked. */
  readonly issuedTokens: string[];
  /** The kinds of the events so far, MCP exchanges left out: the authorization flow's shape. */
  authorizationSteps(): string[];
  /** Calls a tool (stepping up when the gateway asks) and returns its first text item. */
  callTool(name: string, args: Record<string, unknown>): Promise<string | undefined>;
}

/** The real provider, also remembering each access token it is given. */
class RecordingProvider extends HeadlessOAuthClientProvider {
  readonly issued: string[] = [];

  override saveTokens(tokens: OAuthTokens): void {
    this.issued.push(tokens.access_token);
    super.saveTokens(tokens);
  }
}

/** The official SDK client with the headless provider, connected through `url`, every flow event recorded. */
export async function connectTraced(url: URL, options: Partial<HeadlessOAuthOptions> = {}): Promise<TracedClient> {
  const events: FlowEvent[] = [];
  const onEvent = (event: FlowEvent): void => void events.push(event);
  const provider = new RecordingProvider({ redirectUrl: REDIRECT_URL, ...options, onEvent });
  const session = await connectWithOAuth(url, provider, { fetch: createTracingFetch(url, onEvent) });
  return {
    events,
    provider,
    session,
    issuedTokens: provider.issued,
    authorizationSteps: () => events.filter((event) => event.kind !== 'mcp').map((event) => event.kind),
    async callTool(name, args) {
      const parsed = CallToolResultSchema.parse(await session.authorized((client) => client.callTool({ name, arguments: args })));
      const first = parsed.content[0];
      return first?.type === 'text' ? first.text : undefined;
    },
  };
}

/** The events of one kind, typed. */
export function eventsOf<K extends FlowEvent['kind']>(events: readonly FlowEvent[], kind: K): Extract<FlowEvent, { kind: K }>[] {
  return events.filter((event): event is Extract<FlowEvent, { kind: K }> => event.kind === kind);
}
