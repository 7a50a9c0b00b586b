import { randomBytes } from 'node:crypto';
import { grantEpochKey, principalDigest, userGrantKey, userGrantPrefix } from '../cache/cache-keys.js';
import type { CacheStore } from '../cache/store.js';
import { z } from 'zod';
import { createSealedRecords, type Lookup } from './records.js';

/** Who a grant belongs to: the issuer and subject of the caller's access token (never the client: a user's grant). */
export interface Principal {
  readonly issuer: string;
  readonly subject: string;
}

const grantSchema = z.object({
  issuer: z.string(),
  subject: z.string(),
  route: z.string(),
  accessToken: z.string(),
  refreshToken: z.string().optional(),
  /** ms since the epoch; absent when the authorization server did not say. */
  expiresAt: z.number().optional(),
  scopes: z.array(z.string()),
  /** The MCP client whose request led to the consent. */
  clientId: z.string().optional(),
  grantedAt: z.number(),
  /** When the access token was last issued (grant or refresh). */
  issuedAt: z.number(),
  /**
   * The revocation epoch of its principal and route the grant was read under; a grant made from it (a refresh)
   * stays bound to it, so a refresh finishing after a revocation saves a grant that does not open. Absent on a
   * new grant (a consent): saved under the current epoch.
   */
  epoch: z.string().optional(),
});

/** A grant as stored: always bound to an epoch. */
const storedGrantSchema = grantSchema.required({ epoch: true });

/** One user's grant at one route's upstream authorization server. Holds tokens: never logged, stored sealed. */
export type UserGrant = z.infer<typeof grantSchema>;

/** A refresh lock held by its taker; releasing it never removes a lock another replica took after this one expired. */
export interface RefreshLock {
  release(): Promise<void>;
}

const LOCK_OWNER_BYTES = 16;
const EPOCH_BYTES = 16;

/** Most grants an operator listing reads. */
const MAX_LISTED_GRANTS = 100_000;

export interface GrantStore {
  get(principal: Principal, route: string): Promise<Lookup<UserGrant>>;
  save(grant: UserGrant, ttlMs: number): Promise<boolean>;
  /** Forgets the grant (the gateway dropped it: refused refresh, upstream 401). */
  remove(principal: Principal, route: string): Promise<boolean>;
  /**
   * The user or an operator revoked it: its revocation epoch ends first, so no earlier value of the grant (written
   * back by whoever can write to the store, or saved by a refresh running meanwhile) opens again. False when the
   * store could not answer.
   */
  revoke(principal: Principal, route: string): Promise<boolean>;
  /** Every grant of the given routes (operators: `grants list`); `undefined` when the store cannot answer. */
  list(routes: readonly string[]): Promise<UserGrant[] | undefined>;
  /** One refresh per grant across replicas: the lock for the caller that may refresh now, else `undefined`. */
  lockRefresh(principal: Principal, route: string, ttlMs: number): Promise<RefreshLock | undefined>;
  /** A keyed digest of the principal for audit lines and listings: correlates, reveals nothing. */
  digest(principal: Principal): string;
}

/**
 * Grants in the cache store under HMAC keys of route and principal, sealed (AES-256-GCM, key derived from
 * cache.key_secret for this purpose) with the key as associated data, so a grant copied onto another principal's or
 * route's key does not open; the opened grant must also name the principal and route it was read for.
 *
 * Each grant also names the revocation epoch of its principal and route (a random value under its own key), and
 * opens only while that epoch is current. A revocation deletes the epoch and the next consent makes a new one: a
 * grant value saved before, restored into the store afterwards, names an epoch that is gone. Whoever restores the
 * epoch too restores a snapshot: only revocation at the upstream's authorization server (which `disconnect` asks
 * for) ends that grant's tokens.
 */
export function createGrantStore(store: CacheStore, keySecret: Buffer): GrantStore {
  const records = createSealedRecords(store, keySecret, 'user grant', storedGrantSchema);
  const keyOf = (principal: Principal, route: string) => userGrantKey(keySecret, route, principal.issuer, principal.subject);
  const epochOf = (principal: Principal, route: string) => grantEpochKey(keySecret, route, principal.issuer, principal.subject);
  const lockOf = (principal: Principal, route: string) => `grant-refresh:${keyOf(principal, route)}`;

  /** The grant under `key` if it belongs to `principal` on `route` and names their current epoch. */
  async function current(key: string, principal: Principal, route: string): Promise<Lookup<UserGrant>> {
    const [found, epoch] = await Promise.all([records.get(key), store.lookup(epochOf(principal, route))]);
    if (found.kind !== 'found') return found;
    // No epoch, no grant: a grant is never used without its epoch being current.
    if (epoch.kind !== 'found') return epoch;
    const grant = found.value;
    const matches = grant.route === route && grant.issuer === principal.issuer && grant.subject === principal.subject;
    return matches && epoch.value === grant.epoch ? found : { kind: 'absent' };
  }

  /** The principal's epoch on `route`, made when there is none yet. */
  async function epochFor(principal: Principal, route: string, ttlMs: number): Promise<string | undefined> {
    const key = epochOf(principal, route);
    const existing = await store.get(key);
    if (existing !== undefined) return existing;
    const made = randomBytes(EPOCH_BYTES).toString('base64url');
    if (await store.setIfAbsent(key, made, ttlMs)) return made;
    // Made by another request meanwhile (or the store cannot answer).
    return store.get(key);
  }

  return {
    get: (principal, route) => current(keyOf(principal, route), principal, route),
    async save(grant, ttlMs) {
      const epoch = grant.epoch ?? (await epochFor(grant, grant.route, ttlMs));
      if (epoch === undefined) return false;
      if (!(await records.put(keyOf(grant, grant.route), { ...grant, epoch }, ttlMs))) return false;
      // The epoch lives as long as the grant; one a revocation ended meanwhile stays ended (compare-and-extend).
      return store.touchIfEquals(epochOf(grant, grant.route), epoch, ttlMs);
    },
    remove: (principal, route) => records.delete(keyOf(principal, route)),
    async revoke(principal, route) {
      const ended = (await store.delete(epochOf(principal, route))) || store.status().state === 'ready';
      await records.delete(keyOf(principal, route));
      return ended;
    },
    async list(routes) {
      const grants: UserGrant[] = [];
      for (const route of routes) {
        const keys = await store.scan(userGrantPrefix(keySecret, route), MAX_LISTED_GRANTS);
        if (keys === undefined) return undefined;
        for (const key of keys) {
          const found = await records.get(key);
          if (found.kind === 'unavailable') return undefined;
          if (found.kind !== 'found' || found.value.route !== route) continue;
          // Only grants that would still open: not one a revocation left behind.
          const usable = await current(key, found.value, route);
          if (usable.kind === 'unavailable') return undefined;
          if (usable.kind === 'found') grants.push(usable.value);
        }
      }
      return grants;
    },
    async lockRefresh(principal, route, ttlMs) {
      const key = lockOf(principal, route);
      const owner = randomBytes(LOCK_OWNER_BYTES).toString('base64url');
      if (!(await store.setIfAbsent(key, owner, ttlMs))) return undefined;
      return {
        async release() {
          await store.deleteIfEquals(key, owner);
        },
      };
    },
    digest: (principal) => principalDigest(keySecret, principal.issuer, principal.subject),
  };
}
