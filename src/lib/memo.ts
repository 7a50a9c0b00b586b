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

/**
 * `compute(text)` remembered for the last text each connection carried: a client sends the same token (and so the
 * same Authorization value) on a kept-alive connection again and again, and a token's cache key is a hash (SHA-256
 * or HMAC) that costs more than the rest of a cached token's check (bench/README.md). Exact string
 * equality gives exactly what `compute` would; nothing is shared across connections. It keeps one text per open
 * connection (the one its next request will most likely send again), dropped with the connection; the token caches
 * themselves hold only keys. A mismatch costs one string comparison (and the computation it would have cost anyway).
 */
export function perConnection<V>(compute: (text: string) => V): (text: string, connection: object | undefined) => V {
  const last = new WeakMap<object, { readonly text: string; readonly value: V }>();
  return (text, connection) => {
    if (connection === undefined) return compute(text);
    const remembered = last.get(connection);
    if (remembered?.text === text) return remembered.value;
    const value = compute(text);
    last.set(connection, { text, value });
    return value;
  };
}
