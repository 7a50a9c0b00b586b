/**
 * The compiled config is shared by every request and swapped whole on reload, so nothing may change it:
 * objects and arrays are frozen, maps and sets refuse mutation.
 */

function refuse(): never {
  throw new TypeError('the compiled configuration is immutable');
}

class ImmutableMap<K, V> extends Map<K, V> {
  constructor(entries: Iterable<readonly [K, V]>) {
    super();
    for (const [key, value] of entries) super.set(key, value);
  }

  override set(): never {
    return refuse();
  }

  override delete(): never {
    return refuse();
  }

  override clear(): never {
    return refuse();
  }
}

class ImmutableSet<T> extends Set<T> {
  constructor(values: Iterable<T>) {
    super();
    for (const value of values) super.add(value);
  }

  override add(): never {
    return refuse();
  }

  override delete(): never {
    return refuse();
  }

  override clear(): never {
    return refuse();
  }
}

export function immutableMap<K, V>(entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
  return new ImmutableMap(entries);
}

export function immutableSet<T>(values: Iterable<T>): ReadonlySet<T> {
  return new ImmutableSet(values);
}

/** Freezes plain objects and arrays recursively, including the values of maps and sets. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const children = value instanceof Map || value instanceof Set ? [...value.values()] : Object.values(value);
  Object.freeze(value);
  for (const child of children) deepFreeze(child);
  return value;
}
