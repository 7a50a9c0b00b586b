import { LRUCache } from 'lru-cache';
import type { AuthContext } from '../decision/index.js';
import type { UserOAuthSettings } from '../config/types.js';
import type { GrantAudit, GrantActor } from './audit.js';
import { carriesLink, elicitationAnswer, type ElicitationRequest } from '../decision/index.js';
import type { GrantStore, Principal, UserGrant } from './grant-store.js';
import type { ConsentLinks } from './links.js';
import type { Lookup } from './records.js';
import { GatewayError } from '../decision/index.js';
import type { AuthorizationCodeFlow } from './authorization-code-client.js';
import type { IssuedToken, TokenRequestResult } from '../credentials/token-endpoint.js';
import type { UpstreamCredentialProvider } from '../decision/index.js';

/**
 * `user_oauth` on one route: the caller's own grant at the upstream's authorization server. No grant → a URL
 * elicitation of a single-use consent link for this principal and route (nothing is forwarded); a grant about to
 * expire is refreshed first (one refresh per grant across processes and replicas, refresh tokens rotated as the
 * server issues them); a refused refresh or an upstream 401 drops the grant, so the next request asks again.
 */
export interface UserGrants extends UpstreamCredentialProvider {
  readonly route: string;
  readonly settings: UserOAuthSettings;
  readonly vendor: AuthorizationCodeFlow;
  /** Keeps the grant a consent just obtained. False when the store did not take it. */
  connect(principal: Principal, clientId: string | undefined, token: IssuedToken): Promise<boolean>;
  current(principal: Principal): Promise<Lookup<UserGrant>>;
  /** Revokes at the upstream's authorization server when it can (RFC 7009) and forgets the grant. */
  disconnect(principal: Principal, by: Exclude<GrantActor, 'gateway'>): Promise<'revoked' | 'absent' | 'unavailable'>;
}

export interface UserGrantsDeps {
  readonly grants: GrantStore;
  readonly links: ConsentLinks;
  readonly vendor: AuthorizationCodeFlow;
  readonly audit: GrantAudit;
  /** Shown with every elicitation of this route. */
  readonly message: string;
  readonly now: () => number;
}

/** Refresh this long before expiry at most (a quarter of the lifetime for short-lived tokens). */
const MAX_REFRESH_MARGIN_MS = 60_000;
/** After a refresh failed for want of an answer, requests use what they have for this long instead of asking again. */
const REFRESH_BACKOFF_MS = 5_000;
const REFRESH_BACKOFF_ENTRIES = 10_000;
/** While another replica refreshes, how often the store is read again for its result. */
const REFRESH_WAIT_POLL_MS = 100;
/** The refresh lock's time beyond the token requests: the grant's re-read and write, each one store command. */
const LOCK_STORE_MARGIN_MS = 1_000;

type RefreshOutcome =
  | { readonly kind: 'refreshed'; readonly grant: UserGrant }
  | { readonly kind: 'dropped' }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** A refused refresh grant (RFC 6749 §5.2 invalid_grant is a 400) or an unusable answer: the grant is gone. */
function refreshLost(result: Extract<TokenRequestResult, { ok: false }>): boolean {
  return (result.failure === 'refused' && result.status === 400) || result.failure === 'malformed' || result.failure === 'unsupported_token_type';
}

function refreshDue(grant: UserGrant, now: number): boolean {
  if (grant.expiresAt === undefined) return false;
  const lifetime = grant.expiresAt - grant.issuedAt;
  return now >= grant.expiresAt - Math.min(MAX_REFRESH_MARGIN_MS, lifetime / 4);
}

const expired = (grant: UserGrant, now: number) => grant.expiresAt !== undefined && now >= grant.expiresAt;

function callerPrincipal(auth: AuthContext): Principal {
  // A grant is a user's: a token naming no subject cannot have one.
  if (auth.subject === undefined || auth.subject === '') {
    throw new GatewayError('upstream_credentials_failed', { reason: 'caller_without_subject' });
  }
  return { issuer: auth.issuer, subject: auth.subject };
}

const NO_REQUEST: ElicitationRequest = { httpMethod: 'GET', protocolVersion: undefined, message: undefined, body: undefined };

export function createUserGrants(route: string, settings: UserOAuthSettings, deps: UserGrantsDeps): UserGrants {
  const { grants, audit, now } = deps;
  // Twice the one token request a refresh makes under the lock (metadata is looked up before locking): a lock
  // that expired mid-refresh would let another replica refresh with a refresh token this one is rotating.
  const lockTtl = 2 * settings.timeout + LOCK_STORE_MARGIN_MS;
  const inFlight = new Map<string, Promise<RefreshOutcome>>();
  const backoff = new LRUCache<string, true>({ max: REFRESH_BACKOFF_ENTRIES, ttl: REFRESH_BACKOFF_MS, perf: { now } });
  const flightKey = (principal: Principal) => JSON.stringify([principal.issuer, principal.subject]);

  const headersOf = (accessToken: string): Readonly<Record<string, string>> =>
    Object.freeze({ [settings.header]: settings.header === 'authorization' ? `Bearer ${accessToken}` : accessToken });

  /** Without a refresh token a grant lives as long as its access token; with one, `grant_ttl` past its last use. */
  function storedFor(grant: UserGrant): number {
    if (grant.refreshToken !== undefined || grant.expiresAt === undefined) return settings.grantTtl;
    return Math.min(settings.grantTtl, grant.expiresAt - now());
  }

  function grantOf(principal: Principal, clientId: string | undefined, token: IssuedToken, previous?: UserGrant): UserGrant {
    const issuedAt = now();
    const refreshToken = token.refreshToken ?? previous?.refreshToken;
    const expiresAt = token.expiresInMs === undefined ? undefined : issuedAt + token.expiresInMs;
    return {
      issuer: principal.issuer,
      subject: principal.subject,
      route,
      accessToken: token.accessToken,
      ...(refreshToken === undefined ? {} : { refreshToken }),
      ...(expiresAt === undefined ? {} : { expiresAt }),
      scopes: token.scope === undefined ? (previous?.scopes ?? [...settings.scopes]) : token.scope.split(' ').filter(Boolean),
      ...(clientId === undefined ? {} : { clientId }),
      grantedAt: previous?.grantedAt ?? issuedAt,
      issuedAt,
      // A refresh stays under the revocation epoch its grant was read under: a revocation meanwhile wins.
      ...(previous?.epoch === undefined ? {} : { epoch: previous.epoch }),
    };
  }

  async function drop(principal: Principal, reason: string): Promise<void> {
    await grants.remove(principal, route);
    audit({ action: 'drop', route, principal: grants.digest(principal), outcome: 'ok', by: 'gateway', reason });
  }

  async function elicitation(auth: AuthContext, principal: Principal, request: ElicitationRequest): Promise<GatewayError> {
    const answer = elicitationAnswer(request);
    if (!carriesLink(answer)) return new GatewayError('elicitation_required', { reason: 'no_grant', elicitation: { answer, message: deps.message } });
    const link = await deps.links.issue({ route, issuer: principal.issuer, subject: principal.subject, clientId: auth.clientId });
    if (!link) return new GatewayError('auth_unavailable', { reason: 'consent_link_not_stored' });
    return new GatewayError('elicitation_required', { reason: 'no_grant', elicitation: { answer, message: deps.message, link } });
  }

  /** Another replica holds the refresh lock: its result shows up in the store (or the grant disappears). */
  async function awaitRefreshElsewhere(principal: Principal, grant: UserGrant): Promise<RefreshOutcome> {
    if (!expired(grant, now())) return { kind: 'refreshed', grant };
    // Bounded by count, not by the (injectable) clock: the other refresh cannot hold its lock longer.
    for (let waited = 0; waited < lockTtl; waited += REFRESH_WAIT_POLL_MS) {
      await new Promise((resolve) => setTimeout(resolve, REFRESH_WAIT_POLL_MS));
      const found = await grants.get(principal, route);
      if (found.kind === 'absent') return { kind: 'dropped' };
      if (found.kind === 'found' && found.value.accessToken !== grant.accessToken) return { kind: 'refreshed', grant: found.value };
    }
    return { kind: 'unavailable', reason: 'refresh_in_progress_elsewhere' };
  }

  async function refreshFailed(principal: Principal, result: Extract<TokenRequestResult, { ok: false }>): Promise<RefreshOutcome> {
    const reason = `token_endpoint_${result.failure}${result.status === undefined ? '' : `_${result.status}`}`;
    audit({ action: 'refresh', route, principal: grants.digest(principal), outcome: 'failed', by: 'gateway', reason });
    if (refreshLost(result)) {
      await drop(principal, 'refresh_refused');
      return { kind: 'dropped' };
    }
    backoff.set(flightKey(principal), true);
    return { kind: 'unavailable', reason };
  }

  async function refresh(principal: Principal, grant: UserGrant, refreshToken: string): Promise<RefreshOutcome> {
    if (backoff.has(flightKey(principal))) return { kind: 'unavailable', reason: 'token_endpoint_backoff' };
    // Metadata before the lock: its lookup (up to `timeout` per candidate URL) must not eat the lock's time.
    if (!(await deps.vendor.endpoints())) return refreshFailed(principal, { ok: false, failure: 'network' });
    const lock = await grants.lockRefresh(principal, route, lockTtl);
    if (!lock) return awaitRefreshElsewhere(principal, grant);
    try {
      // Another replica may have refreshed between our read and our lock: its rotated refresh token is the only one
      // still valid (reusing the old one would make the server revoke the grant).
      const latest = await grants.get(principal, route);
      if (latest.kind === 'absent') return { kind: 'dropped' };
      if (latest.kind === 'unavailable') return { kind: 'unavailable', reason: 'grant_store_unavailable' };
      if (latest.value.accessToken !== grant.accessToken) return { kind: 'refreshed', grant: latest.value };
      const result = await deps.vendor.refresh(refreshToken);
      if (!result.ok) return await refreshFailed(principal, result);
      const next = grantOf(principal, grant.clientId, result.token, grant);
      const saved = await grants.save(next, storedFor(next));
      // Not stored: this request still uses the new token, but the rotated refresh token is lost with it.
      audit({ action: 'refresh', route, principal: grants.digest(principal), outcome: saved ? 'ok' : 'failed', by: 'gateway', ...(saved ? {} : { reason: 'store_write_failed' }) });
      return { kind: 'refreshed', grant: next };
    } finally {
      await lock.release();
    }
  }

  /** One refresh per principal in this process however many requests wait. */
  function refreshOnce(principal: Principal, grant: UserGrant, refreshToken: string): Promise<RefreshOutcome> {
    const key = flightKey(principal);
    const pending = inFlight.get(key);
    if (pending) return pending;
    const flight = refresh(principal, grant, refreshToken).finally(() => inFlight.delete(key));
    inFlight.set(key, flight);
    return flight;
  }

  async function accessTokenOf(auth: AuthContext, principal: Principal, grant: UserGrant, request: ElicitationRequest): Promise<string> {
    if (!refreshDue(grant, now())) return grant.accessToken;
    if (grant.refreshToken === undefined) {
      if (!expired(grant, now())) return grant.accessToken;
      await drop(principal, 'expired_without_refresh_token');
      throw await elicitation(auth, principal, request);
    }
    const outcome = await refreshOnce(principal, grant, grant.refreshToken);
    switch (outcome.kind) {
      case 'refreshed':
        return outcome.grant.accessToken;
      case 'dropped':
        throw await elicitation(auth, principal, request);
      case 'unavailable':
        // The authorization server cannot be asked now: a token still valid is used; otherwise a clear refusal,
        // never a 401 (which would send the client re-authorizing at the gateway's own authorization server).
        if (!expired(grant, now())) return grant.accessToken;
        throw new GatewayError('upstream_credentials_failed', { reason: outcome.reason });
    }
  }

  return {
    route,
    settings,
    vendor: deps.vendor,
    async headersFor(auth, _subjectToken, request = NO_REQUEST) {
      const principal = callerPrincipal(auth);
      const found = await grants.get(principal, route);
      if (found.kind === 'unavailable') throw new GatewayError('auth_unavailable', { reason: 'grant_store_unavailable' });
      if (found.kind === 'absent') throw await elicitation(auth, principal, request);
      return headersOf(await accessTokenOf(auth, principal, found.value, request));
    },
    async upstreamRejected(auth, sent) {
      if (auth.subject === undefined) return;
      const principal = { issuer: auth.issuer, subject: auth.subject };
      const found = await grants.get(principal, route);
      // Only the grant whose token was refused: a refresh in between already replaced it.
      if (found.kind === 'found' && headersOf(found.value.accessToken)[settings.header] === sent[settings.header]) {
        await drop(principal, 'upstream_401');
      }
    },
    async connect(principal, clientId, token) {
      const grant = grantOf(principal, clientId, token);
      const saved = await grants.save(grant, storedFor(grant));
      audit({ action: 'grant', route, principal: grants.digest(principal), outcome: saved ? 'ok' : 'failed', by: 'user', ...(saved ? {} : { reason: 'store_write_failed' }) });
      return saved;
    },
    current: (principal) => grants.get(principal, route),
    async disconnect(principal, by) {
      const found = await grants.get(principal, route);
      if (found.kind !== 'found') return found.kind;
      const { refreshToken, accessToken } = found.value;
      // Revoking the refresh token ends the grant with its access tokens (RFC 7009 §2.1); without one, the access
      // token is all there is (servers issuing JWT access tokens may not revoke those).
      const revoked =
        refreshToken === undefined ? await deps.vendor.revoke(accessToken, 'access_token') : await deps.vendor.revoke(refreshToken, 'refresh_token');
      await grants.revoke(principal, route);
      const reason = revoked ? 'revoked_at_authorization_server' : 'not_revoked_at_authorization_server';
      audit({ action: 'revoke', route, principal: grants.digest(principal), outcome: 'ok', by, reason });
      return 'revoked';
    },
  };
}
