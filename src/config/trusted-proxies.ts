import { BlockList, isIP } from 'node:net';

/**
 * `trusted_proxies`: the peers whose forwarding headers (X-Forwarded-For, X-Forwarded-Host) the gateway believes.
 * Any other peer's copies of them are the client's own words and are ignored.
 */
export interface TrustedProxies {
  /** No peer is trusted: the common case, answered without looking at an address. */
  readonly none: boolean;
  trusts(address: string | undefined): boolean;
}

const CIDR = /^([^/]+)(?:\/(\d{1,3}))?$/;

/** Why an entry is not an IPv4/IPv6 address or CIDR block; `undefined` when it is one. */
export function trustedProxyProblem(entry: string): string | undefined {
  const match = CIDR.exec(entry);
  const family = match?.[1] === undefined ? 0 : isIP(match[1]);
  if (!match || family === 0) return 'must be an IP address or a CIDR block like 10.0.0.0/8 or fd00::/8';
  const bits = match[2] === undefined ? undefined : Number(match[2]);
  if (bits !== undefined && bits > (family === 4 ? 32 : 128)) return `prefix length must be at most ${family === 4 ? 32 : 128}`;
  return undefined;
}

/** IPv4-mapped IPv6 peers (`::ffff:10.0.0.1`, as Node reports IPv4 clients of a dual-stack socket) match IPv4 blocks. */
function unmapped(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** Entries must have passed `trustedProxyProblem`. */
export function compileTrustedProxies(entries: readonly string[]): TrustedProxies {
  const blocks = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) blocks.addAddress(address, type);
    else blocks.addSubnet(address, Number(bits), type);
  }
  const none = entries.length === 0;
  return Object.freeze({
    none,
    trusts(address: string | undefined): boolean {
      if (none || address === undefined) return false;
      const plain = unmapped(address);
      const family = isIP(plain);
      return family !== 0 && blocks.check(plain, family === 4 ? 'ipv4' : 'ipv6');
    },
  });
}
