import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { addressPolicy } from './address-policy.js';
import { runAuthorizationCodeFlow } from './authorization-code-flow.js';
import { missingClientIdentity, obtainClientIdentity, type ClientIdentity } from './client-identity.js';
import { discover, type AuthorizationServerFound } from './discovery.js';
import { authorizationServerChecks, isPrefixResource, resourceMetadataChecks, usableAuthorizationServer } from './discovery-checks.js';
import { startRedirectListener, type RedirectListener } from './loopback-redirect.js';
import { McpSession, type RefusedRequest } from './mcp-session.js';
import { recordingFetch, type RecordingFetch } from './recording-fetch.js';
import type { Redactor } from './redaction.js';
import { canonicalResource } from './resource-identifier.js';
import { selectScope, unionScopes } from './scope-selection.js';
import type { StoredToken } from './token-store.js';
import type { Challenge } from './www-authenticate.js';

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
  readonly redactor: Redactor;
  readonly fetch?: FetchLike;
  readonly now?: () => number;
}

/** Why `login` stopped; `exitCode` 2 when the server could not be reached at all. */
export class LoginError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/** Authorizations for one operation before its failure is final: the first, and at most two step-ups. */
const MAX_AUTHORIZATIONS_PER_OPERATION = 3;

/** Everything the first authorization established; later ones (step-up, expiry) reuse it. */
interface Established {
  readonly server: AuthorizationServerFound;
  readonly resource: string;
  readonly identity: ClientIdentity;
  readonly scopesSupported?: readonly string[];
}

/** The authorization state of one `login` run against one resource. */
class Authorizer {
  readonly #options: LoginOptions;
  readonly #http: RecordingFetch;
  readonly #redirect: RedirectListener;
  readonly #attempts = new Map<string, number>();
  #established: Established | undefined;
  #tokens: OAuthTokens | undefined;
  #requestedScope: string | undefined;
  #lastAuthorizedFor: string | undefined;

  constructor(options: LoginOptions, http: RecordingFetch, redirect: RedirectListener) {
    this.#options = options;
    this.#http = http;
    this.#redirect = redirect;
  }

  get tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  /** After a 401 or a 403 to `operation`: authorizes (again, or with more scope), or throws when that cannot help. */
  async handle(operation: string, refused: RefusedRequest): Promise<void> {
    const attempts = (this.#attempts.get(operation) ?? 0) + 1;
    this.#attempts.set(operation, attempts);
    if (attempts > MAX_AUTHORIZATIONS_PER_OPERATION) {
      throw new LoginError(`${operation}: still refused (${refused.status}) after ${MAX_AUTHORIZATIONS_PER_OPERATION} authorizations; giving up`);
    }
    const challengeScope = refused.challenge?.params.get('scope');
    const error = refused.challenge?.params.get('error');
    if (refused.status === 403) {
      await this.#stepUp(operation, error, challengeScope);
    } else if (this.#tokens !== undefined && this.#lastAuthorizedFor === operation) {
      throw new LoginError(`${operation}: the server refused the token just issued for it (401${error === undefined ? '' : `, error="${error}"`})`);
    } else {
      const established = await this.#establish(refused.challenge, operation);
      const scope = this.#tokens !== undefined ? this.#requestedScope : (this.#options.scope ?? selectScope(challengeScope, established.scopesSupported).scope);
      await this.#authorize(operation, scope);
    }
  }

  async #stepUp(operation: string, error: string | undefined, challengeScope: string | undefined): Promise<void> {
    if (this.#tokens === undefined || error !== 'insufficient_scope' || challengeScope === undefined) {
      throw new LoginError(`${operation}: 403${error === undefined ? '' : ` ${error}`}; a new authorization would not change that`);
    }
    const scope = unionScopes(this.#requestedScope, challengeScope);
    if (scope === this.#requestedScope) {
      throw new LoginError(
        `${operation}: 403 insufficient_scope for "${challengeScope}", which was already requested: the authorization server does not grant it`,
      );
    }
    this.#options.log(`${operation}: 403 insufficient_scope, stepping up to scope "${scope}"`);
    await this.#authorize(operation, scope);
  }

  /**
   * Discovery, its checks (a spec client refuses on any failure but a prefix `resource`, see isPrefixResource), and
   * the client identity: once per run.
   */
  async #establish(challenge: Challenge | undefined, operation: string): Promise<Established> {
    if (this.#established !== undefined) return this.#established;
    const { log, url } = this.#options;
    log(`${operation}: 401, authorization needed`);
    const discovery = await discover(url, challenge?.params.get('resource_metadata'), this.#http);
    if (discovery.legacy) {
      log(`no protected resource metadata: 2025-03-26 discovery at ${new URL('/', url).href}`);
    } else {
      const prefix = isPrefixResource(discovery);
      const refusal = resourceMetadataChecks(discovery).find((check) => check.status === 'fail' && !(prefix && check.id === 'resource'));
      if (refusal !== undefined) throw new LoginError(`protected resource metadata refused: ${refusal.message}`);
      log(`protected resource metadata: ${discovery.resourceMetadata?.url ?? ''}`);
      if (prefix) {
        log(
          `resource ${discovery.resourceMetadata?.document.resource ?? ''} is only a prefix of ${canonicalResource(url)} (RFC 9728 §3.3 ` +
            'requires them identical): accepted as the official SDK does, and the token is requested for it',
        );
      }
    }
    const server = usableAuthorizationServer(discovery);
    if (server === undefined) {
      const problems = discovery.authorizationServers.flatMap((found) =>
        authorizationServerChecks(found, discovery).filter((check) => check.status === 'fail'),
      );
      throw new LoginError(`no authorization server a client may use: ${problems.map((check) => check.message).join('; ') || 'none listed'}`);
    }
    log(`authorization server: ${server.server}${server.metadata === undefined ? ' (no metadata: /authorize, /token, /register)' : ''}`);
    const identity = await obtainClientIdentity(server, {
      clientId: this.#options.clientId,
      clientSecret: this.#options.clientSecret,
      clientMetadataUrl: this.#options.clientMetadataUrl,
      redirectUri: this.#redirect.redirectUri,
      fetch: this.#http.fetch,
    });
    if (identity === undefined) {
      throw new LoginError(missingClientIdentity(server));
    }
    this.#options.redactor.add(identity.information.client_secret);
    log(`client: ${identity.description}`);
    this.#established = {
      server,
      resource: discovery.resourceMetadata?.document.resource ?? canonicalResource(url),
      identity,
      scopesSupported: discovery.resourceMetadata?.document.scopes_supported,
    };
    return this.#established;
  }

  async #authorize(operation: string, scope: string | undefined): Promise<void> {
    const established = this.#established;
    if (established === undefined) throw new Error('authorization before discovery');
    const tokens = await runAuthorizationCodeFlow(
      {
        server: established.server,
        client: established.identity.information,
        resource: established.resource,
        redirect: this.#redirect,
        presentAuthorizationUrl: this.#options.presentAuthorizationUrl,
        authorizationTimeoutMs: this.#options.authorizationTimeoutMs,
        fetch: this.#http.fetch,
        redactor: this.#options.redactor,
      },
      scope,
    );
    this.#tokens = tokens;
    this.#requestedScope = scope;
    this.#lastAuthorizedFor = operation;
    const lifetime = tokens.expires_in === undefined ? '' : `, expires in ${tokens.expires_in} s`;
    this.#options.log(`authorized: scope "${tokens.scope ?? scope ?? ''}"${lifetime}`);
  }

  stored(now: number): StoredToken | undefined {
    const [established, tokens] = [this.#established, this.#tokens];
    if (established === undefined || tokens === undefined) return undefined;
    const scope = tokens.scope ?? this.#requestedScope;
    return {
      resource: established.resource,
      authorizationServer: established.server.server,
      clientId: established.identity.information.client_id,
      accessToken: tokens.access_token,
      tokenType: tokens.token_type,
      ...(scope === undefined ? {} : { scope }),
      ...(tokens.expires_in === undefined ? {} : { expiresAt: new Date(now + tokens.expires_in * 1000).toISOString() }),
      obtainedAt: new Date(now).toISOString(),
    };
  }

  close(): Promise<void> {
    return this.#established?.identity.close() ?? Promise.resolve();
  }
}

function failure(operation: string, error: unknown): LoginError {
  return error instanceof LoginError ? error : new LoginError(`${operation} failed: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * `mcp-auth-gateway login`: an MCP client session (initialize, tools/list, optionally one tools/call) that
 * authorizes when the server asks, exactly as the specification's client: discovery with its checks, registration by
 * priority, authorization code with PKCE S256, `state` and `resource`, a loopback redirect, and step-up on 403
 * insufficient_scope (at most MAX_AUTHORIZATIONS_PER_OPERATION per operation). Resolves with the token to store.
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
        session.token = authorizer.tokens?.access_token;
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
    const token = authorizer.stored((options.now ?? Date.now)());
    if (token === undefined) throw new LoginError(`${url.href} did not ask for authorization: there is no token to obtain`);
    return token;
  } finally {
    await session.close();
    await authorizer.close();
    await redirect.close();
    await http.close();
  }
}
