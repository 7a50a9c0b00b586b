import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { addressPolicy } from './address-policy.js';
import { Authorizer, type LoginOptions } from './authorizer.js';
import { LoginError } from './login-error.js';
import { startRedirectListener } from './loopback-redirect.js';
import { McpSession, type ToolResult } from './mcp-session.js';
import { recordingFetch } from './recording-fetch.js';
import { printable } from './report.js';
import type { StoredToken } from './token-store.js';


/** The links of a URL elicitation the server answered with (2025-11-25 error -32042, 2026-07-28 input_required). */
function consentLinks(error: unknown): { readonly url: string; readonly message: string }[] {
  if (!(error instanceof UrlElicitationRequiredError)) return [];
  // The link in its parsed form (no line breaks or spaces), the message without control characters: both come from
  // the server and go to the terminal.
  return error.elicitations.filter((elicitation) => URL.canParse(elicitation.url)).map(({ url, message }) => ({ url: new URL(url).href, message: printable(message) }));
}

/** Longest tool error text printed: enough for a sentence and a link. */
const TOOL_ERROR_TEXT_MAX = 500;

/** The text a tool reported its error with (a gateway without the user's grant puts its consent link there). */
function toolErrorText(result: ToolResult): string {
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const texts = content.flatMap((item) => (typeof item === 'object' && item !== null && 'text' in item && typeof item.text === 'string' ? [item.text] : []));
  return printable(texts.join(' ').slice(0, TOOL_ERROR_TEXT_MAX));
}

function failure(operation: string, error: unknown, log: (line: string) => void): LoginError {
  if (error instanceof LoginError) return error;
  const links = consentLinks(error);
  if (links.length > 0) {
    // Printed, never opened: the user decides whether to follow a link a server sent (URL elicitation).
    for (const { url, message } of links) {
      log(`${operation}: the server needs you to grant access first${message === '' ? '' : `: ${message}`}`);
      log(`Open this link in your browser, then run login again: ${url}`);
    }
    return new LoginError(`${operation}: access not granted yet (URL elicitation): open the link above, then run login again`);
  }
  return new LoginError(`${operation} failed: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * `mcp-auth-gateway login`: an MCP client session (initialize, tools/list, optionally one tools/call) that
 * authorizes when the server asks, exactly as the specification's client: discovery with its checks, registration by
 * priority, authorization code with PKCE S256, `state` and `resource`, a loopback redirect, and step-up on 403
 * insufficient_scope (authorizer.ts). Resolves with the token in use, which is in the store already.
 */
export async function login(options: LoginOptions): Promise<StoredToken> {
  const { log, url } = options;
  const http = recordingFetch({ timeoutMs: options.timeoutMs, addresses: addressPolicy(url, options.allowPrivate ?? false), fetch: options.fetch });
  const session = new McpSession(url, http.fetch);
  const redirect = await startRedirectListener();
  const authorizer = new Authorizer(options, http, redirect);

  const run = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await call();
      } catch (error) {
        const refused = session.takeRefusal();
        if (refused === undefined) throw failure(operation, error, log);
        await authorizer.handle(operation, refused);
        session.token = authorizer.accessToken;
        session.dpop = authorizer.dpop;
      }
    }
  };

  try {
    try {
      await run('initialize', () => session.connect());
    } catch (error) {
      if (!session.answered) throw new LoginError(`cannot reach ${url.href}: ${error instanceof Error ? error.message : String(error)}`, 2);
      throw error;
    }
    const { protocol, serverName } = session.describe();
    log(`initialize: ${serverName ?? 'server'} answered (MCP ${protocol})`);
    const dropped = (name: string, reason: string) => log(`tools/list: tool ${name} left out: ${reason}`);
    const tools = await run('tools/list', () => session.listTools(dropped));
    log(`tools/list: ${tools.length} tool(s)`);
    const tool = options.callTool;
    if (tool !== undefined) {
      const result = await run(`tools/call ${tool.name}`, () => session.callTool(tool.name, tool.arguments));
      const outcome = result.isError === true ? ['the tool reported an error', toolErrorText(result)].filter((part) => part !== '').join(': ') : 'ok';
      log(`tools/call ${tool.name}: ${outcome}`);
    }
    const token = authorizer.stored();
    if (token === undefined) throw new LoginError(`${url.href} did not ask for authorization: there is no token to obtain`);
    return token;
  } finally {
    await session.close();
    await authorizer.close();
    await redirect.close();
    await http.close();
  }
}
