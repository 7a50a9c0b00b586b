import { isIPv6 } from 'node:net';

/** Why no slot was given; fixed strings, used as log field and metric label. */
export type BulkheadRefusal = 'bulkhead_full' | 'client_share_full';

export interface BulkheadSlot {
  release(): void;
}

/**
 * At most `capacity` calls at once, and at most `perClient` of them for one client, so a flood from one client
 * (garbage tokens, each a distinct AS call) leaves the rest of the slots to everyone else (checklist K11).
 */
export interface FairBulkhead {
  /** A slot for a call made for `clientAddress`; without an address only the total is bounded. */
  acquire(clientAddress: string | undefined): BulkheadSlot | BulkheadRefusal;
}

/** One client's share of the slots: a quarter, so four flooding clients are needed to fill the bulkhead. */
const CLIENT_SHARE = 1 / 4;

export function createFairBulkhead(capacity: number): FairBulkhead {
  const perClient = Math.max(1, Math.floor(capacity * CLIENT_SHARE));
  const heldBy = new Map<string, number>();
  let running = 0;

  return {
    acquire(clientAddress) {
      if (running >= capacity) return 'bulkhead_full';
      const client = clientAddress === undefined ? undefined : clientBucket(clientAddress);
      const held = client === undefined ? 0 : (heldBy.get(client) ?? 0);
      if (held >= perClient) return 'client_share_full';
      running += 1;
      if (client !== undefined) heldBy.set(client, held + 1);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          running -= 1;
          if (client === undefined) return;
          const left = (heldBy.get(client) ?? 1) - 1;
          if (left === 0) heldBy.delete(client);
          else heldBy.set(client, left);
        },
      };
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
