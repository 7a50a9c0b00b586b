import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { runAuthorizationCodeFlow } from './authorization-code-flow.js';
import { missingClientIdentity, obtainClientIdentity, type ClientIdentity } from './client-identity.js';
import { discover, type AuthorizationServerFound } from './discovery.js';
import { challengeTakesDpop, createDpopSigner, dpopTokenFetch, takesDpop, type DpopSigner } from './dpop.js';
import { authorizationServerChecks, isPrefixResource, resourceMetadataChecks, usableAuthorizationServer } from './discovery-checks.js';
import { LoginError } from './login-error.js';
import type { RedirectListener } from './loopback-redirect.js';
import type { RefusedRequest } from './mcp-session.js';
import type { RecordingFetch } from './recording-fetch.js';
import type { Redactor } from './redaction.js';
import { canonicalResource } from './resource-identifier.js';
import { selectScope, unionScopes } from './scope-selection.js';
import { dpopKeyOf, findToken, forgetToken, readTokenStore, saveToken, type StoredToken } from './token-store.js';

/** What `login` was asked to do (its command-line options), as the authorizer needs it. */
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

/** Authorizations for one operation before its failure is final: the first, and at most two more. */
const MAX_AUTHORIZATIONS_PER_OPERATION = 3;

/** A stored access token this close to its expiry is refreshed rather than sent: it could expire on the way. */
const EXPIRY_MARGIN_MS = 30_000;

/** What discovery chose: the authorization server a client may use, and the resource to ask it for. */
interface Target {
  readonly server: AuthorizationServerFound;
  readonly resource: string;
  readonly scopesSupported?: readonly string[];
  /** Both the resource and its authorization server take DPoP proofs (ES256): tokens are asked for bound to a key. */
  readonly dpop: boolean;
}

/** The tokens in use and the client they were issued to: a refresh authenticates as that client. */
interface Held {
  readonly tokens: OAuthTokens;
  readonly client: OAuthClientInformationMixed;
  /** The scope asked for (or the stored one): step-up adds to it. */
  readonly scope?: string;
  readonly obtainedAt: number;
}

/** Refusals after which the refresh token is dead (the server answered); anything else may pass and is not final. */
function refreshRefused(error: unknown): error is OAuthError {
  return error instanceof OAuthError && error.errorCode !== 'server_error' && error.errorCode !== 'temporarily_unavailable';
}

/**
 * The authorization state of one `login` run against one resource. On a 401 it (re)discovers the authorization
 * server and then uses, in order: the token stored for that server and resource, a refresh of the token held, a
 * new authorization. On a 403 insufficient_scope it authorizes again for more scope (a refresh cannot widen a
 * grant). Tokens and clients are bound to their authorization server (MCP 2026-07-28): when the metadata names
 * another one, its own client identity and tokens are used, never the previous server's. Every new token is saved
 * at once, so a rotated refresh token is never lost.
 */
export class Authorizer {
  readonly #options: LoginOptions;
  readonly #http: RecordingFetch;
  readonly #redirect: RedirectListener;
  readonly #attempts = new Map<string, number>();
  #target: Target | undefined;
  #identity: ClientIdentity | undefined;
  #held: Held | undefined;
  /** The DPoP key of the current authorization server's tokens, once one is used. */
  #signer: DpopSigner | undefined;
  /** The operation the last new authorization was for, and the last refresh: each is tried once per operation. */
  #authorizedFor: string | undefined;
  #refreshedFor: string | undefined;

  constructor(options: LoginOptions, http: RecordingFetch, redirect: RedirectListener) {
    this.#options = options;
    this.#http = http;
    this.#redirect = redirect;
  }

  get accessToken(): string | undefined {
    return this.#held?.tokens.access_token;
  }

  /** The key proofs are signed with while the token held is DPoP-bound (`token_type: DPoP`, RFC 9449 §5). */
  get dpop(): DpopSigner | undefined {
    return this.#held?.tokens.token_type.toLowerCase() === 'dpop' ? this.#signer : undefined;
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
      return;
    }
    if (this.#held !== undefined && this.#authorizedFor === operation) {
      throw new LoginError(`${operation}: the server refused the token just issued for it (401${error === undefined ? '' : `, error="${error}"`})`);
    }
    const target = await this.#discover(refused, operation);
    if (this.#held === undefined && (await this.#adoptStored(target, operation))) return;
    if (this.#held?.tokens.refresh_token !== undefined && this.#refreshedFor !== operation && (await this.#refresh(operation))) return;
    const scope = this.#held?.scope ?? this.#options.scope ?? selectScope(challengeScope, target.scopesSupported).scope;
    await this.#authorize(operation, scope);
  }

  async #stepUp(operation: string, error: string | undefined, challengeScope: string | undefined): Promise<void> {
    if (this.#held === undefined || error !== 'insufficient_scope' || challengeScope === undefined) {
      throw new LoginError(`${operation}: 403${error === undefined ? '' : ` ${error}`}; a new authorization would not change that`);
    }
    const scope = unionScopes(this.#held.scope, challengeScope);
    if (scope === this.#held.scope) {
      throw new LoginError(
        `${operation}: 403 insufficient_scope for "${challengeScope}", which was already requested: the authorization server does not grant it`,
      );
    }
    this.#options.log(`${operation}: 403 insufficient_scope, stepping up to scope "${scope}"`);
    await this.#authorize(operation, scope);
  }

  /**
   * Discovery and its checks (a spec client refuses on any failure but a prefix `resource`, see isPrefixResource),
   * on every 401: a refused token may mean the resource moved to another authorization server. When it did, the
   * previous server's client identity and tokens are dropped (they are bound to it).
   */
  async #discover(refused: RefusedRequest, operation: string): Promise<Target> {
    const { log, url } = this.#options;
    const { challenge } = refused;
    log(this.#held === undefined ? `${operation}: 401, authorization needed` : `${operation}: 401 with a token, discovery again`);
    const discovery = await discover(url, challenge?.params.get('resource_metadata'), this.#http);
    const known = this.#target !== undefined;
    if (discovery.legacy) {
      if (!known) log(`no protected resource metadata: 2025-03-26 discovery at ${new URL('/', url).href}`);
    } else {
      const prefix = isPrefixResource(discovery);
      const refusal = resourceMetadataChecks(discovery).find((check) => check.status === 'fail' && !(prefix && check.id === 'resource'));
      if (refusal !== undefined) throw new LoginError(`protected resource metadata refused: ${refusal.message}`);
      if (!known) log(`protected resource metadata: ${discovery.resourceMetadata?.url ?? ''}`);
      if (prefix && !known) {
        log(
          `resource ${discovery.resourceMetadata?.document.resource ?? ''} is only a prefix of ${canonicalResource(url)} (RFC 9728 §3.3 ` +
            'requires them identical): accepted as the official SDK does, and the token is requested for it',
        );
      }
    }
    const server = usableAuthorizationServer(discovery);
    if (server === undefined) {
      const problems = discovery.authorizationServers.flatMap((found) => authorizationServerChecks(found, discovery).filter((check) => check.status === 'fail'));
      throw new LoginError(`no authorization server a client may use: ${problems.map((check) => check.message).join('; ') || 'none listed'}`);
    }
    const previous = this.#target?.server.server;
    if (previous !== server.server) {
      if (previous === undefined) log(`authorization server: ${server.server}${server.metadata === undefined ? ' (no metadata: /authorize, /token, /register)' : ''}`);
      else log(`authorization server is now ${server.server} (was ${previous}): its own client and tokens are used from here`);
      await this.#identity?.close();
      this.#identity = undefined;
      this.#held = undefined;
      this.#signer = undefined;
    }
    const resourceTakesDpop = takesDpop(discovery.resourceMetadata?.document) || challengeTakesDpop(refused.dpopChallenge);
    const dpop = resourceTakesDpop && takesDpop(server.metadata);
    if (dpop && this.#target?.dpop !== true) log(`DPoP: the resource and ${server.server} take proofs: tokens are requested bound to this client's key`);
    this.#target = {
      server,
      resource: discovery.resourceMetadata?.document.resource ?? canonicalResource(url),
      scopesSupported: discovery.resourceMetadata?.document.scopes_supported,
      dpop,
    };
    return this.#target;
  }

  /** The token stored for this server and resource, when there is one: used as it is while it lasts, else refreshed. */
  async #adoptStored(target: Target, operation: string): Promise<boolean> {
    const { redactor, log } = this.#options;
    const stored = findToken(await readTokenStore(this.#options.tokenStorePath), target.server.server, target.resource);
    if (stored === undefined) return false;
    redactor.add(stored.accessToken);
    redactor.add(stored.refreshToken);
    redactor.add(stored.clientSecret);
    if (stored.dpopKey !== undefined) this.#signer = await createDpopSigner(stored.dpopKey);
    const secret = stored.clientSecret ?? (stored.clientId === this.#options.clientId ? this.#options.clientSecret : undefined);
    const expiresAt = stored.expiresAt === undefined ? undefined : Date.parse(stored.expiresAt);
    this.#held = {
      tokens: {
        access_token: stored.accessToken,
        token_type: stored.tokenType,
        ...(stored.refreshToken === undefined ? {} : { refresh_token: stored.refreshToken }),
        ...(stored.scope === undefined ? {} : { scope: stored.scope }),
      },
      client: { client_id: stored.clientId, ...(secret === undefined ? {} : { client_secret: secret }) },
      scope: stored.scope,
      obtainedAt: Date.parse(stored.obtainedAt),
    };
    const left = expiresAt === undefined ? undefined : expiresAt - this.#now();
    if (left !== undefined && left <= EXPIRY_MARGIN_MS) {
      log(`the stored token for ${target.resource} has expired`);
      if (await this.#refresh(operation)) return true;
      this.#held = undefined;
      return false;
    }
    log(`using the stored token for ${target.resource}${left === undefined ? '' : ` (expires in ${Math.round(left / 1000)} s)`}`);
    return true;
  }

  /** A refresh (OAuth 2.1 §4.3) of the token held; false when the server refused it, after forgetting it. */
  async #refresh(operation: string): Promise<boolean> {
    const [target, held] = [this.#target, this.#held];
    const refreshToken = held?.tokens.refresh_token;
    if (target === undefined || held === undefined || refreshToken === undefined) return false;
    this.#refreshedFor = operation;
    let tokens: OAuthTokens;
    try {
      tokens = await refreshAuthorization(target.server.server, {
        metadata: target.server.metadata,
        clientInformation: held.client,
        refreshToken,
        resource: target.resource,
        fetchFn: await this.#tokenFetch(target),
      });
    } catch (error) {
      if (!refreshRefused(error)) throw error;
      this.#options.log(`refresh refused (${error.errorCode}): signing in again`);
      this.#held = undefined;
      await forgetToken(this.#options.tokenStorePath, target.server.server, target.resource);
      return false;
    }
    await this.#hold(tokens, held.client, held.scope);
    this.#options.log(`refreshed: scope "${tokens.scope ?? held.scope ?? ''}"${tokens.expires_in === undefined ? '' : `, expires in ${tokens.expires_in} s`}`);
    return true;
  }

  /** The client identity for the current server, obtained once: pre-registered, a metadata document, or DCR. */
  async #clientIdentity(target: Target): Promise<ClientIdentity> {
    if (this.#identity !== undefined) return this.#identity;
    const identity = await obtainClientIdentity(target.server, {
      clientId: this.#options.clientId,
      clientSecret: this.#options.clientSecret,
      clientMetadataUrl: this.#options.clientMetadataUrl,
      redirectUri: this.#redirect.redirectUri,
      fetch: this.#http.fetch,
    });
    if (identity === undefined) throw new LoginError(missingClientIdentity(target.server));
    this.#options.redactor.add(identity.information.client_secret);
    this.#options.log(`client: ${identity.description}`);
    this.#identity = identity;
    return identity;
  }

  async #authorize(operation: string, scope: string | undefined): Promise<void> {
    const target = this.#target;
    if (target === undefined) throw new Error('authorization before discovery');
    const identity = await this.#clientIdentity(target);
    const tokens = await runAuthorizationCodeFlow(
      {
        server: target.server,
        client: identity.information,
        resource: target.resource,
        redirect: this.#redirect,
        presentAuthorizationUrl: this.#options.presentAuthorizationUrl,
        authorizationTimeoutMs: this.#options.authorizationTimeoutMs,
        fetch: await this.#tokenFetch(target),
        redactor: this.#options.redactor,
      },
      scope,
    );
    this.#authorizedFor = operation;
    await this.#hold(tokens, identity.information, scope);
    const lifetime = tokens.expires_in === undefined ? '' : `, expires in ${tokens.expires_in} s`;
    const bound = this.dpop === undefined ? '' : ', DPoP-bound';
    this.#options.log(`authorized: scope "${tokens.scope ?? scope ?? ''}"${lifetime}${bound}`);
  }

  /**
   * The fetch token requests go through: with a DPoP proof when the target takes DPoP, or when the token held is
   * bound (its refresh must be proved with the same key, RFC 9449 §5). The key: the one held, else the one stored
   * for this authorization server, else a new one.
   */
  async #tokenFetch(target: Target): Promise<FetchLike> {
    if (!target.dpop && this.dpop === undefined) return this.#http.fetch;
    this.#signer ??= await createDpopSigner(dpopKeyOf(await readTokenStore(this.#options.tokenStorePath), target.server.server));
    return dpopTokenFetch(this.#signer, this.#http.fetch);
  }

  /** Holds new tokens and saves them at once: the refresh token they replace may already be dead (rotation). */
  async #hold(tokens: OAuthTokens, client: OAuthClientInformationMixed, scope: string | undefined): Promise<void> {
    this.#options.redactor.add(tokens.access_token);
    this.#options.redactor.add(tokens.refresh_token);
    this.#held = { tokens, client, scope: tokens.scope ?? scope, obtainedAt: this.#now() };
    const stored = this.stored();
    if (stored !== undefined) await saveToken(this.#options.tokenStorePath, stored);
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  /** The token in use, as the store keeps it; undefined before any. */
  stored(): StoredToken | undefined {
    const [target, held] = [this.#target, this.#held];
    if (target === undefined || held === undefined) return undefined;
    const { tokens, client } = held;
    // A pre-registered client's secret stays in the file the user gave; a registered one has no other home.
    const secret = client.client_secret !== undefined && client.client_id !== this.#options.clientId ? client.client_secret : undefined;
    return {
      resource: target.resource,
      authorizationServer: target.server.server,
      clientId: client.client_id,
      ...(secret === undefined ? {} : { clientSecret: secret }),
      accessToken: tokens.access_token,
      tokenType: tokens.token_type,
      ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }),
      ...(held.scope === undefined ? {} : { scope: held.scope }),
      ...(tokens.expires_in === undefined ? {} : { expiresAt: new Date(held.obtainedAt + tokens.expires_in * 1000).toISOString() }),
      obtainedAt: new Date(held.obtainedAt).toISOString(),
      ...(this.dpop === undefined ? {} : { dpopKey: this.dpop.privateJwk }),
    };
  }

  close(): Promise<void> {
    return this.#identity?.close() ?? Promise.resolve();
  }
}
