/**
 * The kinds of record the in-process store keeps apart, each with its own bound (`cache.memory.<kind>`): a flood of
 * one kind (garbage tokens, consent links) evicts only older records of that kind, never sessions or grants.
 * Defaults are sized for one replica.
 */
export const MEMORY_RECORD_KINDS = {
  sessions: { default: 100_000, meaning: 'Session bindings. With Redis: the bindings this replica has seen, kept to serve known sessions through a Redis outage.' },
  grants: { default: 20_000, meaning: 'User grants of user_oauth routes, with their revocation epochs and refresh locks.' },
  consent_links: { default: 10_000, meaning: 'Consent links not yet opened (at most one live link per person and route).' },
  consent_flows: { default: 10_000, meaning: 'Signed-in browsers on their way through the consent pages.' },
  introspection: { default: 50_000, meaning: 'Cached active introspection answers.' },
  introspection_negative: { default: 10_000, meaning: 'Cached inactive introspection answers (made by any caller, valid token or not).' },
  upstream_tokens: { default: 20_000, meaning: 'Upstream access tokens (client_credentials, token exchange).' },
  rate_limits: { default: 50_000, meaning: 'Rate-limit buckets, one per caller and route.' },
  dpop_proofs: {
    default: 100_000,
    meaning: 'DPoP proofs seen (their jti), each kept for twice dpop.iat_window: past the bound the oldest could be replayed within its window.',
  },
} as const;

export type MemoryRecordKind = keyof typeof MEMORY_RECORD_KINDS;

/** Most records kept in process, per kind. */
export type MemoryBounds = Readonly<Record<MemoryRecordKind, number>>;

export const DEFAULT_MEMORY_BOUNDS: MemoryBounds = Object.freeze(
  Object.fromEntries(Object.entries(MEMORY_RECORD_KINDS).map(([kind, { default: bound }]) => [kind, bound])) as Record<MemoryRecordKind, number>,
);
