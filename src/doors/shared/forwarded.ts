import type { TrustedProxies } from '../../config/trusted-proxies.js';
import { singleHeader, type HeaderMap } from '../../decision/index.js';

/** Who the client is and which Host it asked for, as far as the gateway may believe the peers in between. */
export interface ClientOrigin {
  /** The client's address: the peer itself unless it is a trusted proxy that says whom it forwards for. */
  readonly clientAddress: string | undefined;
  /** The Host the client sent: `X-Forwarded-Host` when a trusted proxy set it, else the Host header received. */
  readonly host: string | undefined;
}

/** Every value of a comma-separated header, over all its lines, trimmed, empty ones dropped. */
function listValues(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const lines = Array.isArray(value) ? value : [value];
  return lines.flatMap((line) => line.split(',')).map((item) => item.trim()).filter((item) => item !== '');
}

/**
 * `X-Forwarded-*` read only from peers listed in `trusted_proxies` (a client's own copy would move it past DNS
 * rebinding protection and into another client's bulkhead share). The client address is found the way proxy-addr
 * and nginx's real_ip_recursive do: walk X-Forwarded-For from the right while the address at hand is a trusted
 * proxy; the first untrusted one is the client. `Forwarded` (RFC 7239) is never read: none of the proxies the
 * gateway works with sets it by default, and a header nobody overwrites is one a client writes.
 */
export function clientOrigin(peer: string | undefined, headers: HeaderMap, trusted: TrustedProxies): ClientOrigin {
  const received = singleHeader(headers, 'host');
  if (!trusted.trusts(peer)) return { clientAddress: peer, host: received };
  let client = peer;
  const hops = listValues(headers['x-forwarded-for']);
  for (let index = hops.length - 1; index >= 0 && trusted.trusts(client); index -= 1) client = hops[index];
  // The value the trusted peer itself added is the last one; earlier ones came from further away.
  const forwardedHost = listValues(headers['x-forwarded-host']).at(-1);
  return { clientAddress: client, host: forwardedHost ?? received };
}
