import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Provider, type AsymmetricSigningAlgorithm, type Configuration, type JWKS, type KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from 'pino';
import { keyedDigest, principalDigest } from '../cache/cache-keys.js';
import { createValueSealer } from '../cache/sealed-value.js';
import type { CacheStore } from '../cache/store.js';
import type { AuthorizationServerSettings, CompiledConfig, CompiledRoute } from '../config/types.js';
import { AUTHORIZATION_SERVER_PATHS as PATHS } from '../config/sections/authorization-server.js';
import { createAuthorizationCodeFlow } from '../grants/authorization-code-client.js';
import type { ConsentReply, ConsentRequest } from '../grants/consent-pages.js';
import { createOidcLogin } from '../grants/oidc-login.js';
import { CONSENT_PATHS } from '../grants/paths.js';
import { createSignInSealer } from '../grants/sign-in.js';
import { consentableScopes, entitledScopes } from './entitlements.js';
import { failurePage } from '../grants/pages.js';
import { PAGE_HEADERS, renderErrorPage, renderGatewayConsentPage } from './pages.js';
import { dpopNonceSecret, dpopSigningAlgorithms } from './dpop.js';
import { buildProviderConfiguration } from './provider-config.js';
import { isLoopbackHostname } from './redirect-uris.js';
import { registrationCors } from './registration-cors.js';
import { createResourceRegistry, defaultScopeFromResource, type ResourceRegistry } from './resources.js';
import { resourcesFromRoutes } from './from-config.js';
import { withLoopbackClients } from './client-adapter.js';
import { createLoopbackClientResolver } from './loopback-client-resolver.js';
import { createStoreAdapterFactory } from './store-adapter.js';
import type { DevClient } from './types.js';

export interface GatewayAuthorizationServerServices {
  /** Clients, sessions, codes, tokens, consents (Redis across replicas). */
  readonly store: CacheStore;
  /** Keys and seals every record; derives the cookie keys, so every replica reads every other's cookies. */
  readonly keySecret: Buffer;
  readonly logger?: Logger;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

/** What the door knows of a request besides its bytes. */
export interface RequestContext {
  /** The consent pages' flow cookie, which the sign-in shares (doors/consent.ts owns its name and attributes). */
  readonly cookie: { set(value: string): string };
  /** The client's address (through `trusted_proxies`): registrations are limited per address. */
  readonly clientAddress: string | undefined;
}

export interface GatewayAuthorizationServer {
  readonly issuer: string;
  /** URL patterns (fastify syntax) the door hands to `handle`. */
  readonly paths: readonly string[];
  /** A request to one of `paths`, its URL as received; POST bodies already read are in `req.body`. */
  handle(req: IncomingMessage, res: ServerResponse, context: RequestContext): Promise<void>;
  /** The sign-in callback, when the sealed sign-in in the cookie is one of this server's; `undefined` otherwise. */
  signInCallback(request: ConsentRequest): Promise<ConsentReply> | undefined;
  /** The remembered consents (operators: `clients list`); `undefined` when the store could not answer. */
  listConsents(limit: number): Promise<ConsentRecord[] | undefined>;
  /** Withdraws a person's remembered consent for a client: its grant and every token of it are revoked. */
  withdrawConsent(accountId: string, clientId: string, by: 'user' | 'operator'): Promise<boolean>;
}

/** One remembered consent: who allowed which client, when, under which grant. */
export interface ConsentRecord {
  readonly accountId: string;
  readonly clientId: string;
  readonly grantId: string;
  /** ISO 8601. */
  readonly since: string;
}

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** How long a sign-in at the IdP may take, from the redirect to the callback. */
const SIGN_IN_TTL_MS = 10 * 60_000;
/** A browser session at the gateway's authorization server; the entitlements read at sign-in live as long. */
const SESSION_TTL_SECONDS = 3600;
const INTERACTION_TTL_SECONDS = 600;
const AUTHORIZATION_CODE_TTL_SECONDS = 60;
const OIDC_SCOPES: ReadonlySet<string> = new Set(['openid', 'offline_access']);
/** RFC 7591 registrations per client address: a burst, refilled over a minute. */
const REGISTRATION_BUCKET = { capacity: 20, refillMs: 60_000 };
const RANDOM_BYTES = 32;
const random = () => randomBytes(RANDOM_BYTES).toString('base64url');
const INTERACTION_ROUTE = /^\/([A-Za-z0-9_-]+)(?:\/(confirm|abort))?$/;

function sameSecret(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const [a, b] = [Buffer.from(expected), Buffer.from(given)];
  return a.length === b.length && timingSafeEqual(a, b);
}

function requestPath(req: IncomingMessage): string {
  const target = req.url ?? '/';
  const queryStart = target.indexOf('?');
  return queryStart === -1 ? target : target.slice(0, queryStart);
}

function splitScopes(value: unknown): string[] {
  return typeof value === 'string' ? value.split(' ').filter(Boolean) : [];
}

function asList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function preRegistered(settings: AuthorizationServerSettings): DevClient[] {
  return settings.clients.map((client) => ({
    client_id: client.clientId,
    ...(client.clientName === undefined ? {} : { client_name: client.clientName }),
    ...(client.clientSecret === undefined ? {} : { client_secret: client.clientSecret.reveal() }),
    redirect_uris: client.redirectUris,
  }));
}

const CONSENT_PREFIX = 'as-consent:';

/** Small sealed records of this server besides oidc-provider's own: entitlements per person, consent per person and client. */
function createRecords(store: CacheStore, keySecret: Buffer) {
  const sealer = createValueSealer(keySecret, 'authorization server person record');
  const key = (kind: string, parts: readonly string[]) => `as-${kind}:${keyedDigest(keySecret, ['as', kind, ...parts])}`;
  const consentKey = (accountId: string, clientId: string) => key('consent', [accountId, clientId]);
  const openConsent = async (recordKey: string) => {
    const text = await read(recordKey);
    return text === undefined ? undefined : (JSON.parse(text) as ConsentRecord);
  };
  async function read(recordKey: string): Promise<string | undefined> {
    const sealed = await store.get(recordKey);
    return sealed === undefined ? undefined : sealer.open(recordKey, sealed);
  }
  const write = (recordKey: string, value: string, ttlMs: number) => store.set(recordKey, sealer.seal(recordKey, value), ttlMs);
  return {
    entitlements: {
      get: async (accountId: string) => {
        const text = await read(key('entitled', [accountId]));
        return text === undefined ? undefined : (JSON.parse(text) as string[]);
      },
      set: (accountId: string, scopes: readonly string[]) => write(key('entitled', [accountId]), JSON.stringify(scopes), SESSION_TTL_SECONDS * 1000),
    },
    consents: {
      get: async (accountId: string, clientId: string) => (await openConsent(consentKey(accountId, clientId)))?.grantId,
      set: (record: ConsentRecord, ttlMs: number) => write(consentKey(record.accountId, record.clientId), JSON.stringify(record), ttlMs),
      delete: (accountId: string, clientId: string) => store.delete(consentKey(accountId, clientId)),
      async list(limit: number): Promise<ConsentRecord[] | undefined> {
        const keys = await store.scan(CONSENT_PREFIX, limit);
        if (keys === undefined) return undefined;
        const records = await Promise.all(keys.map(openConsent));
        return records.filter((record): record is ConsentRecord => record !== undefined);
      },
    },
  };
}

/**
 * The gateway as the OAuth authorization server of its routes without `tokens` (oidc-provider, its state in the
 * shared store). It delegates only "who is this person" to the organisation's IdP (`sign_in`, through the same
 * OpenID Connect sign-in, callback and cookie as the consent pages), decides the person's scopes from the ID token
 * claims (`entitlements`), asks their consent (per person and client, remembered, withdrawable) and issues JWT
 * access tokens whose `aud` is the route's resource.
 */
export function createGatewayAuthorizationServer(
  config: CompiledConfig,
  services: GatewayAuthorizationServerServices,
): GatewayAuthorizationServer | undefined {
  return config.authorizationServer && createServer(config, config.authorizationServer, services);
}

function createServer(
  config: CompiledConfig,
  settings: AuthorizationServerSettings,
  services: GatewayAuthorizationServerServices,
): GatewayAuthorizationServer {
  const now = services.now ?? Date.now;
  const { logger } = services;
  const publicUrl = config.publicUrl.href.replace(/\/$/, '');
  const issuer = settings.issuer;
  const mountPath = new URL(issuer).pathname.replace(/\/$/, '');
  const interactionBase = `${mountPath}${PATHS.interaction}`;
  const routes = config.routes.filter((route) => route.usesGatewayAuthorizationServer);
  const resourceList = resourcesFromRoutes(routes);
  const resourceRegistry = createResourceRegistry(resourceList);
  const routeByResource = new Map<string, CompiledRoute>(routes.map((route) => [route.resource, route]));
  const records = createRecords(services.store, services.keySecret);
  const signIns = createSignInSealer(services.keySecret);
  const login = createOidcLogin(
    createAuthorizationCodeFlow(settings.signIn, { resource: undefined }, { fetch: services.fetch, now }),
    settings.signIn.clientId,
    settings.signIn.timeout,
    settings.signIn.scopes.join(' '),
  );
  const refreshTtlSeconds = Math.floor(settings.refreshTokenTtl / 1000);
  const adapterFactory = createStoreAdapterFactory({ store: services.store, keySecret: services.keySecret, longestLifetimeMs: settings.refreshTokenTtl, now });
  const signingKeys = JSON.parse(settings.signingKeys.reveal()) as JWKS;
  const signingAlg = signingKeys.keys[0]?.alg as AsymmetricSigningAlgorithm;

  const audit = (facts: Record<string, unknown>) => logger?.info({ ...facts }, 'authorization audit');
  const personDigest = (accountId: string) => principalDigest(services.keySecret, settings.signIn.issuer, accountId);

  const base = buildProviderConfiguration({
    resources: resourceRegistry,
    clients: preRegistered(settings),
    jwks: signingKeys,
    // One key for every replica (derived from cache.key_secret): a browser's cookies open anywhere.
    cookieKeys: [createHmac('sha256', services.keySecret).update('mcp-auth-gateway authorization server cookies').digest('base64url')],
    adapter: withLoopbackClients(
      adapterFactory,
      // Development (a loopback public_url): metadata documents on loopback http too, under the same limits.
      settings.clientIdMetadataDocuments && isLoopbackHostname(config.publicUrl.hostname) ? createLoopbackClientResolver() : undefined,
    ),
    isAccount: () => true,
    accessTokenTtlSeconds: Math.floor(settings.accessTokenTtl / 1000),
    issueRefreshTokens: true,
    honourApplicationType: true,
    signingAlg,
  });
  const features = base.features ?? {};
  const dpopAlgorithms = dpopSigningAlgorithms(routes);
  const configuration: Configuration = {
    ...base,
    // Its own cookie names: the IdP is often another oidc-provider on the same host (browsers ignore the port).
    cookies: { ...base.cookies, names: { session: '_mcpgw_session', interaction: '_mcpgw_interaction', resume: '_mcpgw_resume' } },
    routes: {
      authorization: PATHS.authorization,
      token: PATHS.token,
      registration: PATHS.registration,
      revocation: PATHS.revocation,
      introspection: PATHS.introspection,
      jwks: PATHS.jwks,
      end_session: `${PATHS.prefix}/session/end`,
      pushed_authorization_request: `${PATHS.prefix}/par`,
      userinfo: `${PATHS.prefix}/me`,
    },
    features: {
      ...features,
      registration: { enabled: settings.dynamicRegistration, initialAccessToken: false, issueRegistrationAccessToken: false },
      clientIdMetadataDocument: { ...features.clientIdMetadataDocument, enabled: settings.clientIdMetadataDocuments },
      // RFC 9449: a token request with a proof gets an access token bound by cnf.jkt, and a public client's refresh
      // token is bound to the same key (§5); a request without one gets a Bearer token. Nonces are offered (a
      // client whose clock is off is asked for one instead of refused), never required.
      dPoP: dpopAlgorithms.length === 0 ? { enabled: false } : { enabled: true, nonceSecret: dpopNonceSecret(services.keySecret) },
    },
    enabledJWA: { ...base.enabledJWA, ...(dpopAlgorithms.length === 0 ? {} : { dPoPSigningAlgValues: dpopAlgorithms }) },
    interactions: { url: (_ctx, interaction) => `${interactionBase}/${interaction.uid}` },
    // Consent is per person and client: remembered across browser sessions until withdrawn.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const accountId = ctx.oidc.session?.accountId;
      const clientId = ctx.oidc.client?.clientId;
      if (accountId === undefined || clientId === undefined) return undefined;
      const grantId = (await records.consents.get(accountId, clientId)) ?? ctx.oidc.session?.grantIdFor(clientId);
      return grantId === undefined ? undefined : ctx.oidc.provider.Grant.find(grantId);
    },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    ttl: {
      ...base.ttl,
      AccessToken: Math.floor(settings.accessTokenTtl / 1000),
      AuthorizationCode: AUTHORIZATION_CODE_TTL_SECONDS,
      IdToken: Math.floor(settings.accessTokenTtl / 1000),
      Interaction: INTERACTION_TTL_SECONDS,
      Grant: refreshTtlSeconds,
      RefreshToken: refreshTtlSeconds,
      Session: SESSION_TTL_SECONDS,
    },
    renderError: (ctx, out) => {
      ctx.status = ctx.status >= 400 ? ctx.status : 400;
      ctx.set({ ...PAGE_HEADERS });
      ctx.body = renderErrorPage(String(out.error), out.error_description === undefined ? undefined : String(out.error_description), '');
    },
  };
  const provider = new Provider(issuer, configuration);
  // An https issuer means TLS ends at a proxy in front: trust its X-Forwarded-Proto for secure cookies.
  provider.proxy = issuer.startsWith('https:');
  provider.use(registrationCors(provider.pathFor('registration')));
  provider.use(refreshInsideConsent(provider));
  provider.use(proofIgnoredForBearerOnly(provider, createResourceRegistry(resourcesFromRoutes(routes.filter((route) => route.dpop.mode === 'bearer_only')))));
  provider.use(defaultScopeFromResource(resourceRegistry, provider.pathFor('authorization')));
  provider.on('server_error', (_ctx, err) => logger?.error({ err }, 'authorization server error'));
  provider.on('grant.revoked', (_ctx, grantId) => audit({ action: 'revoke', grant: grantId.slice(0, 8), by: 'client' }));
  // Every token issued: the grant type, the client, the person (digest) and the scope, never a token.
  provider.on('grant.success', (ctx) => {
    const token = ctx.oidc.entities.AccessToken;
    audit({
      action: 'token',
      grant_type: ctx.oidc.params?.grant_type,
      client: ctx.oidc.client?.clientId,
      principal: token?.accountId === undefined ? undefined : personDigest(token.accountId),
      scope: token?.scope,
    });
  });
  const oidc = provider.callback();

  function sendPage(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { ...PAGE_HEADERS, ...headers });
    res.end(html);
  }

  async function consentPage(interaction: Interaction, accountId: string, action: string): Promise<string | undefined> {
    const entitled = (await records.entitlements.get(accountId)) ?? [];
    const clientId = String(interaction.params.client_id);
    const client = await provider.Client.find(clientId);
    const redirectUri = new URL(String(interaction.params.redirect_uri));
    const resources = asList(interaction.params.resource);
    const asked = splitScopes(interaction.params.scope).filter((scope) => !OIDC_SCOPES.has(scope));
    const consentable = resources.flatMap((resource) => consentableScopes(resourceScopes(resource), entitled));
    if (consentable.length === 0) return undefined;
    return renderGatewayConsentPage({
      action,
      clientName: client?.clientName ?? clientId,
      clientId,
      redirectHost: redirectUri.host,
      redirectIsLoopback: isLoopbackHostname(redirectUri.hostname),
      servers: resources.map((resource) => routeByResource.get(resource)?.resourceName ?? routeByResource.get(resource)?.name ?? resource),
      scopes: asked.filter((scope) => consentable.includes(scope)),
      laterScopes: consentable.filter((scope) => !asked.includes(scope)),
      refusedScopes: asked.filter((scope) => !consentable.includes(scope)),
    });
  }

  function resourceScopes(resource: string): readonly string[] {
    return resourceList.find((entry) => entry.resource === resource)?.scopes ?? [];
  }

  /** Allow: the grant holds every route scope the person is entitled to; asked scopes beyond that are rejected. */
  async function grantConsent(interaction: Interaction, accountId: string): Promise<string | undefined> {
    const clientId = String(interaction.params.client_id);
    const entitled = (await records.entitlements.get(accountId)) ?? [];
    const existing = interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId);
    const grant = existing ?? new provider.Grant({ accountId, clientId });
    const asked = splitScopes(interaction.params.scope);
    const oidcScopes = asked.filter((scope) => OIDC_SCOPES.has(scope));
    if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
    let consented = 0;
    for (const resource of asList(interaction.params.resource)) {
      const allowed = consentableScopes(resourceScopes(resource), entitled);
      consented += allowed.length;
      grant.addResourceScope(resource, allowed.join(' '));
      const refused = asked.filter((scope) => !OIDC_SCOPES.has(scope) && !allowed.includes(scope));
      if (refused.length > 0) grant.rejectResourceScope(resource, refused.join(' '));
    }
    if (consented === 0) return undefined;
    const grantId = await grant.save();
    await records.consents.set({ accountId, clientId, grantId, since: new Date(now()).toISOString() }, settings.refreshTokenTtl);
    audit({ action: 'consent', client: clientId, principal: personDigest(accountId), outcome: 'ok', by: 'user' });
    return grantId;
  }

  async function interactionRequest(req: IncomingMessage, res: ServerResponse, cookie: RequestContext['cookie']): Promise<void> {
    const match = INTERACTION_ROUTE.exec(requestPath(req).slice(interactionBase.length));
    if (!match) return sendPage(res, 404, renderErrorPage('not_found', undefined, ''));
    const [, uid, action] = match;
    if (req.method !== (action === undefined ? 'GET' : 'POST')) return sendPage(res, 405, renderErrorPage('method_not_allowed', undefined, ''));
    if (req.method === 'POST' && req.headers.origin !== undefined && req.headers.origin !== 'null' && req.headers.origin !== new URL(publicUrl).origin) {
      return sendPage(res, 403, renderErrorPage('cross_origin_form', undefined, ''));
    }
    const interaction = await provider.interactionDetails(req, res);
    if (interaction.uid !== uid) return sendPage(res, 400, renderErrorPage('interaction_mismatch', undefined, ''));
    const accountId = interaction.session?.accountId;

    if (action === 'abort') {
      if (accountId !== undefined) {
        audit({ action: 'consent', client: String(interaction.params.client_id), principal: personDigest(accountId), outcome: 'denied', by: 'user' });
      }
      const denied = { error: 'access_denied', error_description: 'End-User denied the request' };
      return void (await provider.interactionFinished(req, res, denied, { mergeWithLastSubmission: false }));
    }
    if (interaction.prompt.name === 'login') {
      if (action !== undefined) return sendPage(res, 400, renderErrorPage('prompt_mismatch', undefined, ''));
      // The sign-in at the IdP: its state, nonce and verifier sealed into the browser's flow cookie.
      const state = random();
      const nonce = random();
      const request = await login.start(publicUrl + CONSENT_PATHS.loginCallback, state, nonce);
      if (!request) return sendPage(res, 503, renderErrorPage('temporarily_unavailable', 'The sign-in service cannot be reached. Try again later.', ''));
      const sealed = signIns.seal({ expiresAt: now() + SIGN_IN_TTL_MS, state, nonce, codeVerifier: request.codeVerifier, interaction: uid });
      res.writeHead(302, { location: request.url.href, 'set-cookie': cookie.set(sealed), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
      return void res.end();
    }
    if (interaction.prompt.name !== 'consent' || accountId === undefined) return sendPage(res, 400, renderErrorPage('unsupported_prompt', undefined, ''));
    if (action === undefined) {
      const html = await consentPage(interaction, accountId, `${interactionBase}/${uid}`);
      if (html !== undefined) return sendPage(res, 200, html);
    }
    const grantId = action === 'confirm' ? await grantConsent(interaction, accountId) : undefined;
    if (grantId === undefined) {
      audit({ action: 'consent', client: String(interaction.params.client_id), principal: personDigest(accountId), outcome: 'denied', by: 'gateway', reason: 'not_entitled' });
      return void (await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'you are not entitled to any scope of this resource' },
        { mergeWithLastSubmission: false },
      ));
    }
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /** Ends the interaction the sign-in was for with `result`, and sends the browser back to the authorization. */
  async function resume(uid: string, result: { login: { accountId: string } } | { error: string; error_description: string }): Promise<ConsentReply> {
    const interaction = await provider.Interaction.find(uid);
    if (!interaction) return { page: failurePage('expired'), flowCookie: null, reason: 'interaction_expired' };
    interaction.result = result;
    await interaction.save(Math.max(1, interaction.exp - Math.floor(now() / 1000)));
    return { redirect: interaction.returnTo, flowCookie: null };
  }

  async function finishSignIn(request: ConsentRequest, pending: { state: string; nonce: string; codeVerifier: string; interaction: string }): Promise<ConsentReply> {
    const { code, state, error, iss } = request.params;
    if (!sameSecret(pending.state, state)) return { page: failurePage('failed'), flowCookie: null, reason: 'login_state_mismatch' };
    // RFC 9207: an answer naming another issuer may come from another server (a mix-up).
    if (iss !== undefined && iss !== login.issuer) return { page: failurePage('failed'), flowCookie: null, reason: 'login_issuer_mismatch' };
    if (error !== undefined || code === undefined || code === '') {
      return resume(pending.interaction, { error: 'access_denied', error_description: 'the sign-in was refused' });
    }
    const result = await login.finish(code, pending.codeVerifier, publicUrl + CONSENT_PATHS.loginCallback, pending.nonce);
    if (!result.ok) return { page: failurePage(result.failure === 'unavailable' ? 'unavailable' : 'failed'), flowCookie: null, reason: `login_${result.failure}` };
    const accountId = result.user.subject;
    const entitled = entitledScopes(settings.entitlements, result.claims);
    if (!(await records.entitlements.set(accountId, entitled))) return { page: failurePage('unavailable'), flowCookie: null, reason: 'store_unavailable' };
    audit({ action: 'sign_in', principal: personDigest(accountId), outcome: 'ok', entitled });
    const clientId = (await provider.Interaction.find(pending.interaction))?.params.client_id;
    if (typeof clientId === 'string') await endConsentBeyond(accountId, clientId, entitled);
    return resume(pending.interaction, { login: { accountId } });
  }

  /**
   * A remembered consent holding a scope the person is no longer entitled to (they left a group at the IdP) ends
   * at their next sign-in for that client: its grant and tokens are revoked, and they are asked again.
   */
  async function endConsentBeyond(accountId: string, clientId: string, entitled: readonly string[]): Promise<void> {
    const grantId = await records.consents.get(accountId, clientId);
    const grant = grantId === undefined ? undefined : await provider.Grant.find(grantId);
    if (!grant) return;
    const held = Object.keys(grant.resources ?? {}).flatMap((resource) => splitScopes(grant.getResourceScope(resource)));
    if (held.some((scope) => !entitled.includes(scope))) await withdrawConsent(accountId, clientId, 'gateway');
  }

  async function withdrawConsent(accountId: string, clientId: string, by: 'user' | 'operator' | 'gateway'): Promise<boolean> {
    const grantId = await records.consents.get(accountId, clientId);
    if (grantId === undefined) return false;
    const grant = await provider.Grant.find(grantId);
    await grant?.destroy();
    await adapterFactory('Grant').revokeByGrantId(grantId);
    await records.consents.delete(accountId, clientId);
    audit({ action: 'withdraw', client: clientId, principal: personDigest(accountId), outcome: 'ok', by });
    return true;
  }

  /** RFC 8414 and OpenID Connect Discovery addresses (path forms when the issuer has a path) → oidc-provider's. */
  const discoveryPaths = new Set([
    `/.well-known/oauth-authorization-server${mountPath}`,
    `${mountPath}/.well-known/openid-configuration`,
    `/.well-known/openid-configuration${mountPath}`,
  ]);

  return {
    issuer,
    paths: [...discoveryPaths, `${mountPath}${PATHS.prefix}/*`, `${mountPath}${PATHS.registration}`],
    async handle(req, res, context) {
      const path = requestPath(req);
      if (path.startsWith(`${interactionBase}/`)) return interactionRequest(req, res, context.cookie);
      const query = (req.url ?? '').slice(path.length);
      if (discoveryPaths.has(path)) req.url = `/.well-known/openid-configuration${query}`;
      else req.url = path.slice(mountPath.length) + query;
      // oidc-provider derives its mount path (the issuer's path) from what was cut off the URL, as under express.
      (req as IncomingMessage & { originalUrl?: string }).originalUrl = mountPath + req.url;
      if (req.method === 'POST' && req.url.startsWith(PATHS.registration)) {
        const address = context.clientAddress ?? 'unknown';
        const taken = await services.store.takeToken(`as-register:${keyedDigest(services.keySecret, [address])}`, REGISTRATION_BUCKET, now());
        if (taken && !taken.allowed) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(Math.ceil(taken.retryAfterMs / 1000)) });
          return void res.end(JSON.stringify({ error: 'slow_down', error_description: 'too many registrations from this address' }));
        }
      }
      await oidc(req, res);
    },
    signInCallback(request) {
      const pending = request.cookie === undefined ? undefined : signIns.open(request.cookie);
      if (pending?.interaction === undefined) return undefined;
      if (pending.expiresAt <= now()) return Promise.resolve({ page: failurePage('expired'), flowCookie: null, reason: 'no_sign_in' });
      return finishSignIn(request, { ...pending, interaction: pending.interaction });
    },
    listConsents: (limit) => records.consents.list(limit),
    withdrawConsent,
  };
}

/** The body oidc-provider reads: the door hands over the bytes it already read, as `req.body`. */
function formOf(ctx: KoaContextWithOIDC): URLSearchParams | undefined {
  const body = (ctx.req as IncomingMessage & { body?: unknown }).body;
  return Buffer.isBuffer(body) || typeof body === 'string' ? new URLSearchParams(body.toString()) : undefined;
}

/**
 * A token request for a `bearer_only` route gets a Bearer token even with a DPoP proof (RFC 9449 §5: the server
 * may ignore the proof, the client reads `token_type`): a bound token would be refused there. oidc-provider binds
 * whenever a proof comes, so the proof is dropped before it reads the request. A bound refresh token still needs
 * its proof, so it is refused for such a route.
 */
function proofIgnoredForBearerOnly(provider: Provider, bearerOnlyResources: ResourceRegistry) {
  const tokenPath = provider.pathFor('token');
  return async (ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<unknown> => {
    if (ctx.path === tokenPath && ctx.method === 'POST' && formOf(ctx)?.getAll('resource').some((resource) => bearerOnlyResources.find(resource) !== undefined)) {
      delete ctx.req.headers.dpop;
    }
    return next();
  };
}

/**
 * A refresh gets what the person consented to (RFC 6749 §6: a refresh without `scope` is "treated as equal to the
 * scope originally granted by the resource owner", which here is the consent, not the first request), or the part
 * of it that its `scope` asks for. So a client that answers a 403 `insufficient_scope` with a refresh, with or
 * without naming the scope (most clients name none), gets the scope when the person is entitled to it: step-up
 * without a new sign-in. oidc-provider cuts a refresh to the refresh token's scope, so the token's is widened first
 * to what its grant holds, never beyond: scopes the person is not entitled to were never consented.
 */
function refreshInsideConsent(provider: Provider) {
  const tokenPath = provider.pathFor('token');
  return async (ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<unknown> => {
    if (ctx.path !== tokenPath || ctx.method !== 'POST') return next();
    const form = formOf(ctx);
    const value = form?.get('refresh_token');
    if (form?.get('grant_type') !== 'refresh_token' || !value) return next();
    const refreshToken = await provider.RefreshToken.find(value);
    if (!refreshToken || refreshToken.consumed || refreshToken.grantId === undefined) return next();
    const grant = await provider.Grant.find(refreshToken.grantId);
    if (!grant) return next();
    const current = new Set(splitScopes(refreshToken.scope));
    const resource = typeof refreshToken.resource === 'string' ? refreshToken.resource : undefined;
    const consented = [...splitScopes(grant.getOIDCScope()), ...(resource ? splitScopes(grant.getResourceScope(resource)) : [])];
    const asked = splitScopes(form.get('scope'));
    const wanted = asked.length === 0 ? consented : asked.filter((scope) => consented.includes(scope));
    const widened = wanted.filter((scope) => !current.has(scope));
    if (widened.length > 0) {
      refreshToken.scope = [...current, ...widened].join(' ');
      await refreshToken.save();
    }
    return next();
  };
}

