/**
 * A TTL both stores accept: whole milliseconds, rounded down so an entry never outlives the bound it was computed
 * from (a token's `exp`). `undefined` when nothing should be stored (≤ 0, NaN, Infinity).
 */
export function storableTtl(ttlMs: number): number | undefined {
  if (!Number.isFinite(ttlMs)) return undefined;
  const ttl = Math.floor(ttlMs);
  return ttl >= 1 ? ttl : undefined;
}
