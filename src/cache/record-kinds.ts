/**
 * The kinds of record the in-process store keeps apart, each with its own bound, so a flood of one kind (garbage
 * tokens' negative answers, consent links) evicts only older records of that kind, never sessions or grants. The
 * configuration names a bound per kind (`cache.memory.<kind>`, config/memory-bounds.ts: the same names, a test holds
 * them equal).
 */
export const RECORD_KINDS = [
  'sessions',
  'grants',
  'consent_links',
  'consent_flows',
  'introspection',
  'introspection_negative',
  'upstream_tokens',
  'rate_limits',
  'dpop_proofs',
] as const;

export type RecordKind = (typeof RECORD_KINDS)[number];

/** Most records kept in process, per kind; a kind not named is kept to FALLBACK_BOUND. */
export type RecordBounds = Readonly<Partial<Record<RecordKind, number>>>;

/** A kind the configuration gave no bound (tests, tools), or keys of no known kind. */
export const FALLBACK_BOUND = 10_000;
