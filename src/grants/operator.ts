import type { Principal, UserGrant } from './grant-store.js';
import type { ConsentRuntime } from './service.js';

/** Which grants an operator command acts on: all of a route, all of a subject, or both narrowed. */
export interface GrantFilter {
  readonly route?: string;
  readonly subject?: string;
}

/** A grant as an operator sees it: who, where, what, since when; never a token. */
export interface GrantListing {
  readonly route: string;
  readonly issuer: string;
  readonly subject: string;
  /** The digest audit lines carry for this principal. */
  readonly principal: string;
  readonly scopes: readonly string[];
  readonly grantedAt: string;
  /** Of the current access token, when known. */
  readonly expiresAt: string | undefined;
  readonly refreshable: boolean;
}

export type GrantCommandResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

async function matchingGrants(consent: ConsentRuntime, filter: GrantFilter): Promise<GrantCommandResult<UserGrant[]>> {
  if (filter.route !== undefined && !consent.routes.has(filter.route)) {
    return { ok: false, problem: `no user_oauth route named "${filter.route}" (routes: ${[...consent.routes.keys()].join(', ')})` };
  }
  const routes = filter.route === undefined ? [...consent.routes.keys()] : [filter.route];
  const grants = await consent.grants.list(routes);
  if (grants === undefined) return { ok: false, problem: 'the cache store (Redis) did not answer' };
  return { ok: true, value: grants.filter((grant) => filter.subject === undefined || grant.subject === filter.subject) };
}

export async function listGrants(consent: ConsentRuntime, filter: GrantFilter): Promise<GrantCommandResult<GrantListing[]>> {
  const found = await matchingGrants(consent, filter);
  if (!found.ok) return found;
  return {
    ok: true,
    value: found.value.map((grant) => ({
      route: grant.route,
      issuer: grant.issuer,
      subject: grant.subject,
      principal: consent.grants.digest(grant),
      scopes: grant.scopes,
      grantedAt: new Date(grant.grantedAt).toISOString(),
      expiresAt: grant.expiresAt === undefined ? undefined : new Date(grant.expiresAt).toISOString(),
      refreshable: grant.refreshToken !== undefined,
    })),
  };
}

/** Revokes each matching grant (at the upstream's authorization server too, when it can) as `operator`. */
export async function revokeGrants(consent: ConsentRuntime, filter: GrantFilter): Promise<GrantCommandResult<number>> {
  if (filter.route === undefined && filter.subject === undefined) {
    return { ok: false, problem: 'grants revoke needs --route or --subject (or both)' };
  }
  const found = await matchingGrants(consent, filter);
  if (!found.ok) return found;
  let revoked = 0;
  for (const grant of found.value) {
    const principal: Principal = { issuer: grant.issuer, subject: grant.subject };
    const outcome = await consent.routes.get(grant.route)?.grants.disconnect(principal, 'operator');
    if (outcome === 'unavailable') return { ok: false, problem: 'the cache store (Redis) did not answer' };
    if (outcome === 'revoked') revoked += 1;
  }
  return { ok: true, value: revoked };
}
