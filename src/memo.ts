/**
 * `compute` memoised per argument object (by identity, not equality: an equal but different object is computed
 * again). For values derived from objects the caches hand out again and again (a reused token's AuthContext, a
 * cached introspection entry), so the derivation runs once per cached object instead of once per request.
 */
export function perObject<K extends object, V extends NonNullable<unknown>>(compute: (key: K) => V): (key: K) => V {
  const memo = new WeakMap<K, V>();
  return (key) => {
    const known = memo.get(key);
    if (known !== undefined) return known;
    const value = compute(key);
    memo.set(key, value);
    return value;
  };
}
