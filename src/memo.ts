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
 * `keyOf(token)` remembered for the last token each connection carried: a client sends the same token on a
 * kept-alive connection again and again, and a cache key is a hash (SHA-256 or HMAC) that costs more than the
 * rest of a cached token's check (bench/README.md, issue 13). Exact string equality gives exactly the key the
 * hash would; nothing is shared across connections. It keeps one token per open connection (the one its next
 * request will most likely send again), dropped with the connection; the token caches themselves hold only keys.
 * A mismatch costs one string comparison (and the hash it would have cost anyway).
 */
export function perConnection(keyOf: (token: string) => string): (token: string, connection: object | undefined) => string {
  const last = new WeakMap<object, { readonly token: string; readonly key: string }>();
  return (token, connection) => {
    if (connection === undefined) return keyOf(token);
    const remembered = last.get(connection);
    if (remembered?.token === token) return remembered.key;
    const key = keyOf(token);
    last.set(connection, { token, key });
    return key;
  };
}
