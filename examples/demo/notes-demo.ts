import { CallToolResultSchema, UrlElicitationRequiredError, type ElicitRequestURLParams } from '@modelcontextprotocol/sdk/types.js';
import { describeFlowEvent } from './describe-event.js';
import { createTracingFetch, type FlowEvent } from './flow-trace.js';
import { completeConsentHeadlessly } from './headless-consent.js';
import { HeadlessOAuthClientProvider } from './headless-oauth-provider.js';
import { connectWithOAuth, type OAuthSession } from './oauth-session.js';

/** The SDK client declares URL elicitation, so the gateway's consent link reaches it as UrlElicitationRequiredError. */
const URL_ELICITATION = { elicitation: { url: {} } };
const REDIRECT_URL = 'http://127.0.0.1/oauth/callback';

function textOf(result: unknown): string {
  const parsed = CallToolResultSchema.safeParse(result);
  const first = parsed.success && parsed.data.isError !== true ? parsed.data.content[0] : undefined;
  if (first?.type !== 'text') throw new Error(`unexpected tool result ${JSON.stringify(result)}`);
  return first.text;
}

const withoutQuery = (url: string) => url.split('?', 1)[0] ?? url;

/**
 * The user_oauth part of `npm run demo:client`: the notes server trusts only its own authorization server, so the
 * first request (after the usual OAuth flow at the gateway) gets a URL elicitation instead of an answer; the user
 * opens the link (headless here), signs in at the gateway's authorization server, allows the connection on the
 * gateway's consent page and authorizes at the notes server's authorization server; then the same client calls
 * the notes tools with its own notes account. Prints each step, never a token, code or link secret.
 */
export async function runNotesDemo(url: URL, print: (line: string) => void): Promise<void> {
  let step = 0;
  const numbered = (line: string) => print(`${String((step += 1)).padStart(3)}. ${line}`);
  const onEvent = (event: FlowEvent): void => {
    if (event.kind === 'mcp') print(`     ${describeFlowEvent(event)}`);
    else numbered(describeFlowEvent(event));
  };
  const provider = new HeadlessOAuthClientProvider({ redirectUrl: REDIRECT_URL, clientName: 'mcp-auth-gateway demo client', refreshTokens: false, onEvent });
  const connect = () => connectWithOAuth(url, provider, { fetch: createTracingFetch(url, onEvent), capabilities: URL_ELICITATION });

  let session: OAuthSession;
  try {
    session = await connect();
    print('already connected to notes (a grant from an earlier run)');
  } catch (error) {
    if (!(error instanceof UrlElicitationRequiredError)) throw error;
    const elicitation = error.elicitations.find((item): item is ElicitRequestURLParams => item.mode === 'url');
    if (!elicitation) throw new Error('the URL elicitation carries no URL', { cause: error });
    numbered(`URL elicitation (MCP error ${error.code}): "${elicitation.message}"`);
    print(`     open ${withoutQuery(elicitation.url)}?link=… (single use, elicitationId ${elicitation.elicitationId})`);
    const consent = await completeConsentHeadlessly(new URL(elicitation.url), {
      decision: 'allow',
      onStep: ({ url: visited, status }) => print(`     browser: ${visited} → HTTP ${status}`),
    });
    if (consent.heading !== 'Connected') throw new Error(`the consent ended with "${consent.heading}" (HTTP ${consent.status})`, { cause: error });
    numbered('consent: signed in at the gateway\'s authorization server as the same user, allowed, authorized at the notes server\'s: "Connected"');
    session = await connect();
  }
  try {
    const note = `hello from the demo client at ${new Date().toISOString()}`;
    print(`add_note = ${textOf(await session.client.callTool({ name: 'add_note', arguments: { text: note } }))}`);
    print(`list_notes:\n${textOf(await session.client.callTool({ name: 'list_notes', arguments: {} }))}`);
    await session.transport.terminateSession();
  } finally {
    await session.close();
  }
}
