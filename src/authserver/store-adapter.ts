import { errors, type Adapter, type AdapterFactory, type AdapterPayload } from 'oidc-provider';
import { keyedDigest } from '../cache/cache-keys.js';
import { createValueSealer } from '../cache/sealed-value.js';
import type { CacheStore } from '../cache/store.js';

export interface StoreAdapterOptions {
  readonly store: CacheStore;
  /** Keys every record (HMAC: no token, code or id is ever a key) and, derived, seals it (AES-256-GCM). */
  readonly keySecret: Buffer;
  /** Lifetime of a grant's revocation mark: no token of a revoked grant may outlive it (the refresh token's). */
  readonly longestLifetimeMs: number;
  readonly now?: () => number;
}

/** A dynamically registered client oidc-provider gives no lifetime: kept a year, like a client secret would be. */
const CLIENT_LIFETIME_MS = 365 * 86_400_000;

/** The associated data of every sealed authorization-server record. */
const PURPOSE = 'authorization server record';

/**
 * oidc-provider's storage (clients, sessions, interactions, grants, codes, tokens) in the gateway's shared store:
 * Redis across replicas, so any replica serves any step and a restart loses nothing; the in-process store for
 * one replica. Values are sealed: a Redis dump reveals no refresh token, code or person.
 *
 * The store has no sets, so two marks stand in for oidc-provider's indexes, each written atomically:
 * - `consume(id)` sets a consumed mark once (setIfAbsent); `find` reports it, and oidc-provider then refuses a
 *   replayed code and treats a rotated refresh token's reuse as theft (RFC 9700 §4.14.2: the family is revoked).
 *   Two replicas redeeming one code at the same instant both find it unused: the one whose mark comes second is
 *   refused (invalid_grant), so a code or refresh token is redeemed once, however it is raced;
 * - `revokeByGrantId` marks the grant revoked; `find` answers nothing for any record of a revoked grant.
 * A store that does not answer reads as "nothing stored" (a refused request), and a write it does not take throws
 * (oidc-provider answers server_error rather than hand out a code or token that was never stored).
 */
export function createStoreAdapterFactory(options: StoreAdapterOptions): AdapterFactory {
  const { store, keySecret, longestLifetimeMs } = options;
  const now = options.now ?? Date.now;
  const sealer = createValueSealer(keySecret, PURPOSE);
  const key = (kind: string, id: string) => `as-${kind}:${keyedDigest(keySecret, ['as', kind, id])}`;
  const revokedGrantKey = (grantId: string) => key('revoked-grant', grantId);

  async function write(recordKey: string, value: string, ttlMs: number): Promise<void> {
    if (!(await store.set(recordKey, sealer.seal(recordKey, value), Math.max(1, Math.floor(ttlMs))))) {
      throw new Error('the store did not take an authorization server record');
    }
  }

  async function read(recordKey: string): Promise<string | undefined> {
    const sealed = await store.get(recordKey);
    return sealed === undefined ? undefined : sealer.open(recordKey, sealed);
  }

  return (model) => {
    const recordKey = (id: string) => key(model, id);
    const consumedKey = (id: string) => key(`${model}-consumed`, id);
    const uidKey = (uid: string) => key(`${model}-uid`, uid);

    /** Until the record's own `exp` (seconds since the epoch), else the longest lifetime. */
    const remainingMs = (payload: AdapterPayload) =>
      typeof payload.exp === 'number' ? payload.exp * 1000 - now() : longestLifetimeMs;

    async function find(id: string): Promise<AdapterPayload | undefined> {
      const text = await read(recordKey(id));
      if (text === undefined) return undefined;
      const payload = JSON.parse(text) as AdapterPayload;
      if (typeof payload.grantId === 'string' && (await store.get(revokedGrantKey(payload.grantId))) !== undefined) return undefined;
      const consumed = await store.get(consumedKey(id));
      return consumed === undefined ? payload : { ...payload, consumed: Number(consumed) };
    }

    const adapter: Adapter = {
      async upsert(id, payload, expiresIn) {
        const ttlMs = expiresIn === undefined ? (model === 'Client' ? CLIENT_LIFETIME_MS : longestLifetimeMs) : expiresIn * 1000;
        await write(recordKey(id), JSON.stringify(payload), ttlMs);
        if (typeof payload.uid === 'string') await write(uidKey(payload.uid), id, ttlMs);
      },
      find,
      async findByUid(uid) {
        const id = await read(uidKey(uid));
        return id === undefined ? undefined : find(id);
      },
      // No device flow: user codes are never issued.
      findByUserCode: () => Promise.resolve(undefined),
      async consume(id) {
        const text = await read(recordKey(id));
        const ttlMs = text === undefined ? longestLifetimeMs : remainingMs(JSON.parse(text) as AdapterPayload);
        const first = await store.setIfAbsent(consumedKey(id), String(Math.floor(now() / 1000)), Math.max(1, Math.floor(ttlMs)));
        if (!first) throw new errors.InvalidGrant('grant already used');
      },
      async destroy(id) {
        await store.delete(recordKey(id));
      },
      async revokeByGrantId(grantId) {
        await write(revokedGrantKey(grantId), '1', longestLifetimeMs);
      },
    };
    return adapter;
  };
}
