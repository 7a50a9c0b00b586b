import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { CompiledRoute } from '../config/types.js';
import type { UserGrants } from './user-oauth.js';
import type { GrantAudit } from './audit.js';
import type { ConsentFlow, ConsentFlows, Connection } from './flows.js';
import type { GrantStore, Principal } from './grant-store.js';
import type { ConsentLinks } from './links.js';
import type { OidcLogin } from './oidc-login.js';
import { CONSENT_PATHS } from './paths.js';
import type { SignIn, SignInSealer } from './sign-in.js';
import {
  connectedPage,
  consentPage,
  failurePage,
  grantsPage,
  notConnectedPage,
  type ConsentFailure,
  type GrantView,
  type Page,
  type WaitingView,
} from './pages.js';

/** What a consent page handler gets from the HTTP layer. */
export interface ConsentRequest {
  /** The flow cookie's value: the sealed sign-in until the callback, then the id of the flow kept server-side. */
  readonly cookie: string | undefined;
  /** Query parameters (GET) or form fields (POST); the first value of each. */
  readonly params: Readonly<Record<string, string | undefined>>;
  /** `Origin` of a POST. */
  readonly origin: string | undefined;
}

/** A page, or a redirect (302 after GET, 303 after POST); `flowCookie` sets (a value) or clears (null) the cookie. */
export interface ConsentReply {
  readonly page?: Page;
  readonly redirect?: string;
  readonly flowCookie?: string | null;
  /** Fixed code for the log line when the flow failed. */
  readonly reason?: string;
}

export interface ConsentPages {
  connect(request: ConsentRequest): Promise<ConsentReply>;
  loginCallback(request: ConsentRequest): Promise<ConsentReply>;
  decide(request: ConsentRequest): Promise<ConsentReply>;
  callback(request: ConsentRequest): Promise<ConsentReply>;
  grants(request: ConsentRequest): Promise<ConsentReply>;
  revoke(request: ConsentRequest): Promise<ConsentReply>;
  /** Connect from the grants page: a signed-in user starts the connection of a route without a consent link. */
  connectRoute(request: ConsentRequest): Promise<ConsentReply>;
}

/** One user_oauth route as the consent pages show it. */
export interface ConsentRoute {
  readonly route: CompiledRoute;
  readonly grants: UserGrants;
}

export interface ConsentPagesDeps {
  /** `public_url` without a trailing slash. */
  readonly publicUrl: string;
  readonly login: OidcLogin;
  readonly flows: ConsentFlows;
  readonly signIns: SignInSealer;
  readonly links: ConsentLinks;
  readonly grants: GrantStore;
  readonly routes: ReadonlyMap<string, ConsentRoute>;
  /** How long a flow (link, sign-in, consent, authorization) may take in all. */
  readonly flowTtl: number;
  readonly audit: GrantAudit;
  readonly now: () => number;
}

const RANDOM_BYTES = 32;
const random = () => randomBytes(RANDOM_BYTES).toString('base64url');
/** The random values this module hands out: base64url of 32 bytes. */
const RANDOM_VALUE = /^[A-Za-z0-9_-]{43}$/;

function sameSecret(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const [a, b] = [Buffer.from(expected), Buffer.from(given)];
  return a.length === b.length && timingSafeEqual(a, b);
}

const samePrincipal = (a: Principal, b: Principal) => a.issuer === b.issuer && a.subject === b.subject;

/**
 * RFC 9207: an authorization response naming an issuer (`iss`) must name the one this flow went to, compared as
 * strings; otherwise it may come from another authorization server (a mix-up). Servers that do not send it pass.
 */
const fromAnotherIssuer = (iss: string | undefined, issuer: string) => iss !== undefined && iss !== issuer;

export function displayName(route: CompiledRoute): string {
  return route.resourceName ?? route.name;
}

/**
 * The consent pages, framework-free (src/consent/plugin.ts is the HTTP adapter). A consent link opens a flow that
 * first proves who is at the browser (OpenID Connect at the gateway's own authorization server): only the principal
 * the link was made for gets the consent page; Allow sends them to the upstream's authorization server; its
 * callback stores the grant. The same sign-in opens the page listing the user's grants, each revocable.
 */
export function createConsentPages(deps: ConsentPagesDeps): ConsentPages {
  const { flows, now, audit } = deps;
  const url = (path: string) => deps.publicUrl + path;
  const publicOrigin = new URL(deps.publicUrl).origin;

  const fail = (failure: ConsentFailure, reason: string, clearCookie = true): ConsentReply => ({
    page: failurePage(failure),
    reason,
    ...(clearCookie ? { flowCookie: null } : {}),
  });

  function denied(connection: Connection, reason: string): void {
    audit({ action: 'grant', route: connection.route, principal: deps.grants.digest(connection.principal), outcome: 'denied', by: 'user', reason });
  }

  /**
   * Sends the browser to sign in at the gateway's authorization server; `connection` absent: managing grants. The
   * sign-in goes into the cookie, sealed: nothing is stored for a visitor who has not signed in.
   */
  async function signIn(connection: Connection | undefined): Promise<ConsentReply> {
    const state = random();
    const nonce = random();
    const request = await deps.login.start(url(CONSENT_PATHS.loginCallback), state, nonce);
    if (!request) return fail('unavailable', 'login_metadata_unavailable');
    const pending: SignIn = { expiresAt: now() + deps.flowTtl, state, nonce, codeVerifier: request.codeVerifier, ...(connection ? { connection } : {}) };
    return { redirect: request.url.href, flowCookie: deps.signIns.seal(pending) };
  }

  /** A new server-side flow at `flow`'s stage; its id goes into the cookie. */
  async function startFlow(flow: ConsentFlow, reply: Omit<ConsentReply, 'flowCookie'>): Promise<ConsentReply> {
    const id = await flows.start(flow, now());
    return id === undefined ? fail('unavailable', 'flow_not_stored') : { ...reply, flowCookie: id };
  }

  /** The flow this browser is in, taken (single use), when it is at `stage`. */
  async function takeFlow<S extends ConsentFlow['stage']>(
    request: ConsentRequest,
    stage: S,
  ): Promise<Extract<ConsentFlow, { stage: S }> | ConsentReply> {
    if (request.cookie === undefined || !RANDOM_VALUE.test(request.cookie)) return fail('expired', 'no_flow_cookie');
    const found = await flows.take(request.cookie);
    if (found.kind === 'unavailable') return fail('unavailable', 'flow_store_unavailable', false);
    if (found.kind === 'absent' || found.value.expiresAt <= now()) return fail('expired', 'flow_unknown_or_used');
    if (found.value.stage !== stage) return fail('failed', `flow_not_at_${stage}`);
    return found.value as Extract<ConsentFlow, { stage: S }>;
  }

  const isReply = (value: ConsentFlow | ConsentReply): value is ConsentReply => !('stage' in value);

  /**
   * Defence in depth behind the CSRF token bound to the flow cookie (SameSite=Lax): a form naming another origin is
   * refused. `Origin: null` names none (browsers send it whenever a referrer policy, a privacy setting or an
   * extension hides the page's origin), so it is left to the token and the cookie, like a missing Origin.
   */
  const crossOrigin = (request: ConsentRequest) =>
    request.origin !== undefined && request.origin !== 'null' && request.origin !== publicOrigin;

  /** A form posted from the grants page: its sign-in (not taken: the page stays usable), its CSRF token checked. */
  async function managingForm(request: ConsentRequest): Promise<Extract<ConsentFlow, { stage: 'manage' }> | ConsentReply> {
    if (crossOrigin(request)) return fail('failed', 'cross_origin_form', false);
    if (request.cookie === undefined || !RANDOM_VALUE.test(request.cookie)) return fail('expired', 'no_flow_cookie');
    const found = await flows.get(request.cookie);
    if (found.kind === 'unavailable') return fail('unavailable', 'flow_store_unavailable', false);
    if (found.kind === 'absent' || found.value.stage !== 'manage' || found.value.expiresAt <= now()) return fail('expired', 'no_manage_session');
    if (!sameSecret(found.value.csrf, request.params.csrf)) return fail('failed', 'csrf_mismatch', false);
    return found.value;
  }

  async function showConsent(connection: Connection, user: Principal): Promise<ConsentReply> {
    const entry = deps.routes.get(connection.route);
    if (!entry) return fail('expired', 'route_removed');
    const endpoints = await entry.grants.vendor.endpoints();
    if (!endpoints) return fail('unavailable', 'vendor_metadata_unavailable');
    const csrf = random();
    const page = consentPage({
      name: displayName(entry.route),
      // Internal host names stay internal: users see the MCP server as their client does.
      resource: entry.route.resource,
      vendor: entry.grants.settings.issuer,
      scopes: entry.grants.settings.scopes,
      clientId: connection.clientId,
      user: user.subject,
      action: url(CONSENT_PATHS.decide),
      csrf,
      authorizationOrigin: new URL(endpoints.metadata.authorization_endpoint).origin,
    });
    return startFlow({ stage: 'consent', expiresAt: now() + deps.flowTtl, connection, csrf }, { page });
  }

  return {
    async connect(request) {
      const link = request.params.link;
      if (link === undefined || !RANDOM_VALUE.test(link)) return fail('expired', 'malformed_link');
      const found = await deps.links.redeem(link);
      if (found.kind === 'unavailable') return fail('unavailable', 'link_store_unavailable');
      if (found.kind === 'absent') return fail('expired', 'link_unknown_or_used');
      const { route, issuer, subject, clientId, elicitationId } = found.value;
      return signIn({ route, principal: { issuer, subject }, elicitationId, ...(clientId === undefined ? {} : { clientId }) });
    },

    async loginCallback(request) {
      const pending = request.cookie === undefined ? undefined : deps.signIns.open(request.cookie);
      if (!pending || pending.expiresAt <= now()) return fail('expired', 'no_sign_in');
      const { code, state, error, iss } = request.params;
      const connection = pending.connection;
      // State first: only a response to this browser's own sign-in may end it, as refused or otherwise.
      if (!sameSecret(pending.state, state)) return fail('failed', 'login_state_mismatch');
      if (fromAnotherIssuer(iss, deps.login.issuer)) return fail('failed', 'login_issuer_mismatch');
      if (error !== undefined) {
        if (connection) denied(connection, 'login_refused');
        return fail('failed', 'login_error_response');
      }
      if (code === undefined || code === '') return fail('failed', 'login_without_code');
      const result = await deps.login.finish(code, pending.codeVerifier, url(CONSENT_PATHS.loginCallback), pending.nonce);
      if (!result.ok) return fail(result.failure === 'unavailable' ? 'unavailable' : 'failed', `login_${result.failure}`);
      if (!connection) {
        const managing: ConsentFlow = { stage: 'manage', expiresAt: now() + deps.flowTtl, user: result.user, csrf: random() };
        return startFlow(managing, { redirect: url(CONSENT_PATHS.grants) });
      }
      // A link sent to someone else must never connect their account to the sender's identity.
      if (!samePrincipal(result.user, connection.principal)) {
        denied(connection, 'signed_in_as_another_principal');
        return fail('wrong_account', 'signed_in_as_another_principal');
      }
      return showConsent(connection, result.user);
    },

    async decide(request) {
      if (crossOrigin(request)) return fail('failed', 'cross_origin_form', false);
      const flow = await takeFlow(request, 'consent');
      if (isReply(flow)) return flow;
      const { connection } = flow;
      if (!sameSecret(flow.csrf, request.params.csrf)) return fail('failed', 'csrf_mismatch');
      const entry = deps.routes.get(connection.route);
      if (!entry) return fail('expired', 'route_removed');
      if (request.params.decision !== 'allow') {
        denied(connection, 'user_denied');
        return { page: notConnectedPage(displayName(entry.route)), flowCookie: null };
      }
      const state = random();
      const { scopes } = entry.grants.settings;
      const authorization = await entry.grants.vendor.authorizationRequest({
        redirectUri: url(CONSENT_PATHS.callback),
        state,
        scope: scopes.length === 0 ? undefined : scopes.join(' '),
      });
      if (!authorization) return fail('unavailable', 'vendor_metadata_unavailable');
      const next: ConsentFlow = { stage: 'vendor', expiresAt: now() + deps.flowTtl, connection, state, codeVerifier: authorization.codeVerifier };
      if (!(await flows.put(request.cookie ?? '', next, now()))) return fail('unavailable', 'flow_not_stored');
      return { redirect: authorization.url.href };
    },

    async callback(request) {
      const flow = await takeFlow(request, 'vendor');
      if (isReply(flow)) return flow;
      const { connection } = flow;
      const entry = deps.routes.get(connection.route);
      if (!entry) return fail('expired', 'route_removed');
      const { code, state, error, iss } = request.params;
      if (!sameSecret(flow.state, state)) {
        denied(connection, 'state_mismatch');
        return fail('failed', 'vendor_state_mismatch');
      }
      if (fromAnotherIssuer(iss, entry.grants.vendor.issuer)) {
        denied(connection, 'issuer_mismatch');
        return fail('failed', 'vendor_issuer_mismatch');
      }
      if (error !== undefined || code === undefined || code === '') {
        denied(connection, error === 'access_denied' ? 'denied_at_authorization_server' : 'authorization_error');
        return { page: notConnectedPage(displayName(entry.route)), flowCookie: null, reason: 'vendor_error_response' };
      }
      const answer = await entry.grants.vendor.redeemCode(code, flow.codeVerifier, url(CONSENT_PATHS.callback));
      if (!answer.ok) {
        const reason = `token_endpoint_${answer.failure}${answer.status === undefined ? '' : `_${answer.status}`}`;
        audit({ action: 'grant', route: connection.route, principal: deps.grants.digest(connection.principal), outcome: 'failed', by: 'user', reason });
        const transient = answer.failure === 'timeout' || answer.failure === 'network' || answer.failure === 'server_error';
        return fail(transient ? 'unavailable' : 'failed', reason);
      }
      if (!(await entry.grants.connect(connection.principal, connection.clientId, answer.token))) {
        return fail('unavailable', 'grant_not_stored');
      }
      return { page: connectedPage(displayName(entry.route)), flowCookie: null };
    },

    async grants(request) {
      const found = request.cookie !== undefined && RANDOM_VALUE.test(request.cookie) ? await flows.get(request.cookie) : undefined;
      if (found?.kind === 'unavailable') return fail('unavailable', 'flow_store_unavailable', false);
      if (found?.kind !== 'found' || found.value.stage !== 'manage' || found.value.expiresAt <= now()) return signIn(undefined);
      const { user, csrf } = found.value;
      const grants: GrantView[] = [];
      const waiting: WaitingView[] = [];
      for (const entry of deps.routes.values()) {
        const grant = await entry.grants.current(user);
        if (grant.kind === 'unavailable') return fail('unavailable', 'grant_store_unavailable', false);
        const shown = { route: entry.route.name, name: displayName(entry.route), vendor: entry.grants.settings.issuer };
        if (grant.kind === 'absent') waiting.push({ ...shown, scopes: entry.grants.settings.scopes });
        else grants.push({ ...shown, scopes: grant.value.scopes, since: new Date(grant.value.grantedAt).toISOString() });
      }
      return { page: grantsPage({ user: user.subject, grants, waiting, revokeAction: url(CONSENT_PATHS.revoke), connectAction: url(CONSENT_PATHS.connectRoute), csrf }) };
    },

    async revoke(request) {
      const flow = await managingForm(request);
      if (isReply(flow)) return flow;
      const entry = deps.routes.get(request.params.route ?? '');
      if (!entry) return fail('failed', 'unknown_route', false);
      const outcome = await entry.grants.disconnect(flow.user, 'user');
      if (outcome === 'unavailable') return fail('unavailable', 'grant_store_unavailable', false);
      return { redirect: url(CONSENT_PATHS.grants) };
    },

    async connectRoute(request) {
      const flow = await managingForm(request);
      if (isReply(flow)) return flow;
      const entry = deps.routes.get(request.params.route ?? '');
      if (!entry) return fail('failed', 'unknown_route', false);
      // The sign-in behind the grants page proves who is at the browser, as a consent link's sign-in does; the
      // consent page and the upstream's authorization follow unchanged. No MCP request asked: no client id.
      return showConsent({ route: entry.route.name, principal: flow.user, elicitationId: randomUUID() }, flow.user);
    },
  };
}
