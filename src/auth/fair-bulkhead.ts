import { isIPv6 } from 'node:net';

/** Why no slot was given; fixed strings, used as log field and metric label. */
export type BulkheadRefusal = 'bulkhead_full' | 'client_share_full';

export interface BulkheadSlot {
  release(): void;
}

/**
 * At most `capacity` calls at once. A client may always use its share (a quarter of the slots); it
 * may use more only while more than one share of the slots stays free for everyone else. A call that cannot start
 * waits, in arrival order, until a slot it may take frees up or `maxWaitMs` passes; the waiting room is bounded too.
 * So a flood of distinct garbage tokens from one client cannot starve the others' valid tokens, and one busy client
 * (or all traffic arriving through one proxy address) still uses most of the bulkhead and waits rather than failing.
 */
export interface FairBulkhead {
  /** A slot for a call made for `clientAddress`, or why none came; without an address only the total applies. */
  acquire(clientAddress: string | undefined): Promise<BulkheadSlot | BulkheadRefusal>;
}

export interface FairBulkheadOptions {
  readonly capacity: number;
  /** How long a call may wait for a slot (the introspection timeout: a caller would not wait longer for the AS). */
  readonly maxWaitMs: number;
  /** Injected in tests; default `setTimeout`. */
  readonly schedule?: (callback: () => void, delayMs: number) => () => void;
}

/** One client's share of the slots: a quarter, so four flooding clients are needed to fill the bulkhead. */
const CLIENT_SHARE = 1 / 4;

interface Waiter {
  readonly client: string | undefined;
  readonly grant: (outcome: BulkheadSlot | BulkheadRefusal) => void;
  cancelTimer: () => void;
}

function timeout(callback: () => void, delayMs: number): () => void {
  const timer = setTimeout(callback, delayMs);
  return () => clearTimeout(timer);
}

export function createFairBulkhead(options: FairBulkheadOptions): FairBulkhead {
  const { capacity } = options;
  const schedule = options.schedule ?? timeout;
  const share = Math.max(1, Math.floor(capacity * CLIENT_SHARE));
  // The waiting room: a few bulkheads' worth in all, one bulkhead's worth per client.
  const maxWaiting = capacity * 4;
  const heldBy = new Map<string, number>();
  const waitingBy = new Map<string, number>();
  const waiting: Waiter[] = [];
  let running = 0;

  const count = (map: Map<string, number>, client: string | undefined) => (client === undefined ? 0 : (map.get(client) ?? 0));
  const adjust = (map: Map<string, number>, client: string | undefined, delta: number) => {
    if (client === undefined) return;
    const next = count(map, client) + delta;
    if (next === 0) map.delete(client);
    else map.set(client, next);
  };
  const mayTake = (client: string | undefined) =>
    running < capacity && (count(heldBy, client) < share || capacity - running > share);

  function take(client: string | undefined): BulkheadSlot {
    running += 1;
    adjust(heldBy, client, 1);
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        running -= 1;
        adjust(heldBy, client, -1);
        admitWaiters();
      },
    };
  }

  /** Freed slots go to the waiters, oldest first among those allowed to take one. */
  function admitWaiters(): void {
    for (let index = 0; index < waiting.length && running < capacity; ) {
      const waiter = waiting[index];
      if (waiter === undefined || !mayTake(waiter.client)) {
        index += 1;
        continue;
      }
      leave(index);
      waiter.grant(take(waiter.client));
    }
  }

  function leave(index: number): void {
    const [waiter] = waiting.splice(index, 1);
    if (!waiter) return;
    waiter.cancelTimer();
    adjust(waitingBy, waiter.client, -1);
  }

  return {
    acquire(clientAddress) {
      const client = clientAddress === undefined ? undefined : clientBucket(clientAddress);
      if (mayTake(client)) return Promise.resolve(take(client));
      const overShare = count(heldBy, client) >= share;
      if (waiting.length >= maxWaiting || count(waitingBy, client) >= capacity) {
        return Promise.resolve(overShare ? 'client_share_full' : 'bulkhead_full');
      }
      return new Promise((resolve) => {
        const waiter: Waiter = { client, grant: resolve, cancelTimer: () => undefined };
        waiting.push(waiter);
        adjust(waitingBy, client, 1);
        waiter.cancelTimer = schedule(() => {
          const index = waiting.indexOf(waiter);
          if (index === -1) return;
          leave(index);
          resolve(count(heldBy, client) >= share ? 'client_share_full' : 'bulkhead_full');
        }, options.maxWaitMs);
      });
    },
  };
}

/**
 * The unit one client is counted in: an IPv4 address (also when IPv4-mapped), or the /64 prefix of an IPv6
 * address, since one host usually holds a whole /64 and could otherwise take a new share per address.
 */
export function clientBucket(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!isIPv6(address)) return address;
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address with `::` expanded, the zone dropped and leading zeros removed. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = (address.split('%')[0] ?? '').split('::');
  const groupsOf = (text: string): string[] => (text === '' ? [] : text.split(':'));
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const elided = Array.from({ length: Math.max(0, 8 - left.length - right.length) }, () => '0');
  return [...left, ...elided, ...right].map((group) => Number.parseInt(group, 16).toString(16));
}
