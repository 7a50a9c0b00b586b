/** One entry of an InFlightList: what `add` hands back, and what `remove` takes. */
export interface InFlightEntry<T> {
  readonly value: T;
  /** @internal neighbours while listed; both cleared on removal. */
  previous: InFlightEntry<T> | undefined;
  /** @internal */
  next: InFlightEntry<T> | undefined;
  /** @internal */
  listed: boolean;
}

/**
 * The things in flight right now (requests, relayed streams): added when one starts, removed when it ends, walked
 * only at shutdown. A doubly linked list rather than a Map or Set on purpose: V8 leaves a rehashed Map's previous
 * table holding the entries it had and pointing at its successor. Once one of those tables reached the old
 * generation, every scavenge kept the whole chain of newer tables alive, and every request listed in them, until
 * the next full collection: the gateway promoted most requests to the old generation (about 4 KB per request,
 * three times the scavenge time of a bare proxy; bench/README.md). A removed entry keeps no link to the list.
 */
export class InFlightList<T> implements Iterable<T> {
  #first: InFlightEntry<T> | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(value: T): InFlightEntry<T> {
    const entry: InFlightEntry<T> = { value, previous: undefined, next: this.#first, listed: true };
    if (this.#first) this.#first.previous = entry;
    this.#first = entry;
    this.#size += 1;
    return entry;
  }

  /** Takes the entry out; removing it again does nothing. */
  remove(entry: InFlightEntry<T>): void {
    if (!entry.listed) return;
    entry.listed = false;
    if (entry.previous) entry.previous.next = entry.next;
    else this.#first = entry.next;
    if (entry.next) entry.next.previous = entry.previous;
    entry.previous = undefined;
    entry.next = undefined;
    this.#size -= 1;
  }

  /** Newest first, as they are now: adding or removing while walking changes nothing in the walk. */
  [Symbol.iterator](): Iterator<T> {
    const values: T[] = [];
    for (let entry = this.#first; entry; entry = entry.next) values.push(entry.value);
    return values[Symbol.iterator]();
  }
}
