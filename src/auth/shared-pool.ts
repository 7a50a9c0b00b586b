/** A pooled value and the hold on it; `release` once when the holder closes (more calls do nothing). */
export interface Lease<T> {
  readonly value: T;
  release(): void;
}

/**
 * Values shared by every holder of the same key for as long as one of them holds it, then dropped (and passed to
 * `dispose`, when given). Verifiers built for a reloaded config acquire before the replaced ones release, so what
 * they cache carries across a reload.
 */
export interface SharedPool<T> {
  /** The value pooled under `key`, made by `create` when no holder has it. */
  acquire(key: string, create: () => T): Lease<T>;
}

export function createSharedPool<T>(dispose?: (value: T) => void): SharedPool<T> {
  const entries = new Map<string, { readonly value: T; holders: number }>();
  return {
    acquire(key, create) {
      let entry = entries.get(key);
      if (!entry) {
        entry = { value: create(), holders: 0 };
        entries.set(key, entry);
      }
      const held = entry;
      held.holders += 1;
      let released = false;
      return {
        value: held.value,
        release() {
          if (released) return;
          released = true;
          held.holders -= 1;
          if (held.holders > 0) return;
          entries.delete(key);
          dispose?.(held.value);
        },
      };
    },
  };
}
