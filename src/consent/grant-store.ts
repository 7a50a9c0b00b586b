import { randomBytes } from 'node:crypto';
import { principalDigest, userGrantKey, userGrantPrefix } from '../cache/cache-keys.js';
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
});

/** One user's grant at one route's upstream authorization server. Holds tokens: never logged, stored sealed. */
export type UserGrant = z.infer<typeof grantSchema>;

/** A refresh lock held by its taker; releasing it never removes a lock another replica took after this one expired. */
export interface RefreshLock {
  release(): Promise<void>;
}

const LOCK_OWNER_BYTES = 16;

/** Most grants an operator listing reads. */
const MAX_LISTED_GRANTS = 100_000;

export interface GrantStore {
  get(principal: Principal, route: string): Promise<Lookup<UserGrant>>;
  save(grant: UserGrant, ttlMs: number): Promise<boolean>;
  remove(principal: Principal, route: string): Promise<boolean>;
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
 */
export function createGrantStore(store: CacheStore, keySecret: Buffer): GrantStore {
  const records = createSealedRecords(store, keySecret, 'user grant', grantSchema);
  const keyOf = (principal: Principal, route: string) => userGrantKey(keySecret, route, principal.issuer, principal.subject);
  const lockOf = (principal: Principal, route: string) => `grant-refresh:${keyOf(principal, route)}`;

  return {
    async get(principal, route) {
      const found = await records.get(keyOf(principal, route));
      if (found.kind !== 'found') return found;
      const grant = found.value;
      const matches = grant.route === route && grant.issuer === principal.issuer && grant.subject === principal.subject;
      return matches ? found : { kind: 'absent' };
    },
    save: (grant, ttlMs) => records.put(keyOf(grant, grant.route), grant, ttlMs),
    remove: (principal, route) => records.delete(keyOf(principal, route)),
    async list(routes) {
      const grants: UserGrant[] = [];
      for (const route of routes) {
        const keys = await store.scan(userGrantPrefix(keySecret, route), MAX_LISTED_GRANTS);
        if (keys === undefined) return undefined;
        for (const key of keys) {
          const found = await records.get(key);
          if (found.kind === 'unavailable') return undefined;
          if (found.kind === 'found' && found.value.route === route) grants.push(found.value);
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
