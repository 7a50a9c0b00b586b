import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { addressPolicy } from './address-policy.js';
import { Authorizer } from './authorizer.js';
import { LoginError } from './login-error.js';
import { startRedirectListener } from './loopback-redirect.js';
import { McpSession } from './mcp-session.js';
import { recordingFetch } from './recording-fetch.js';
import type { Redactor } from './redaction.js';
import type { StoredToken } from './token-store.js';

export interface LoginOptions {
  readonly url: URL;
  /** `--scope`: the scope of the first authorization instead of the spec's selection. */
  readonly scope?: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly clientMetadataUrl?: string;
  /** `--allow-private`: discovered URLs may name non-public hosts (address-policy.ts). */
  readonly allowPrivate?: boolean;
  /** `--call-tool`: a tool to call after `tools/list`, so the token also carries the scopes it needs. */
  readonly callTool?: { readonly name: string; readonly arguments: Record<string, unknown> };
  /** Every request (discovery, registration, token, MCP) without response headers after this long is aborted. */
  readonly timeoutMs: number;
  /** How long the user has to sign in. */
  readonly authorizationTimeoutMs: number;
  readonly presentAuthorizationUrl: (url: URL) => Promise<void>;
  /** One line of progress; never given a token, a code or a secret. */
  readonly log: (line: string) => void;
  /** The token store (token-store.ts): read for a token to reuse, written with every new one. */
  readonly tokenStorePath: string;
  readonly redactor: Redactor;
  readonly fetch?: FetchLike;
  readonly now?: () => number;
}

function failure(operation: string, error: unknown): LoginError {
  return error instanceof LoginError ? error : new LoginError(`${operation} failed: ${error instanceof Error ? error.message : String(error)}`);
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
        if (refused === undefined) throw failure(operation, error);
        await authorizer.handle(operation, refused);
        session.token = authorizer.accessToken;
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
    log(`initialize: ${session.client.getServerVersion()?.name ?? 'server'} answered`);
    const { tools } = await run('tools/list', () => session.client.listTools());
    log(`tools/list: ${tools.length} tool(s)`);
    const tool = options.callTool;
    if (tool !== undefined) {
      const result = await run(`tools/call ${tool.name}`, () => session.client.callTool({ name: tool.name, arguments: tool.arguments }));
      log(`tools/call ${tool.name}: ${result.isError === true ? 'the tool reported an error' : 'ok'}`);
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
