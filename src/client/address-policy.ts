import ipaddr from 'ipaddr.js';

/**
 * Which hosts `probe` and `login` may contact. Everything they fetch after the URL the user typed was named by the
 * server (a challenge's resource_metadata, authorization_servers, endpoints in authorization server metadata,
 * redirects): a hostile or compromised server could point them at this machine, the local network or a cloud
 * metadata service, and read what answers in the report (MCP security best practices, "Server-Side Request
 * Forgery"; mcp-remote CVE-2025-6514 acted on such URLs). So discovered URLs on non-public addresses are refused,
 * unless the typed URL is itself on one (a local deployment) or the user passes `--allow-private`.
 *
 * Hosts are judged as WHATWG URL parsing leaves them: `0x7f.1`, `2130706433` and `[::ffff:127.0.0.1]` arrive as
 * `127.0.0.1` and `[::ffff:7f00:1]`. Names are not resolved: only the names that always mean this machine
 * (`localhost` and `*.localhost`, RFC 6761 §6.3) count as non-public.
 */

/** ipaddr.js range names in words; every range but `unicast` is refused. */
const RANGE_NAMES: Readonly<Record<string, string>> = {
  unspecified: 'the unspecified address',
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique local address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
};

/** `[::1]` → `::1`, `localhost.` → `localhost`, lower case. */
function bareHost(hostname: string): string {
  const host = hostname.toLowerCase().replace(/\.+$/, '');
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * What kind of non-public host `hostname` (a WHATWG URL hostname) is, in words ("a loopback address"), or undefined
 * for a public address or an ordinary name. IPv4-mapped and IPv4-compatible IPv6 addresses are judged by their
 * IPv4 address; special-purpose ranges other than those named here (documentation, NAT64, 6to4, reserved) are
 * refused too.
 */
export function nonPublicHost(hostname: string): string | undefined {
  const host = bareHost(hostname);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'a loopback name';
  if (!ipaddr.isValid(host)) return undefined;
  const range = ipaddr.process(host).range();
  if (range === 'unicast') return undefined;
  return RANGE_NAMES[range] ?? `a special-purpose address (${range})`;
}

/** Refused by an `AddressPolicy`: the message says which host, why, and how to allow it. */
export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
}

export interface AddressPolicy {
  /**
   * Why a request to `url` is refused, or undefined when it may be made. Every request `probe` and `login` make
   * passes through this (recording-fetch.ts), redirects included; so do the endpoints a browser would be sent to.
   */
  refusal(url: string | URL): string | undefined;
}

/** Everything is allowed: the typed URL is on a non-public address, or the user passed `--allow-private`. */
const ALLOW_ALL: AddressPolicy = { refusal: () => undefined };

/**
 * The policy for a run that started at `typed`: its own host is always allowed; when it is non-public (a local
 * deployment) or `allowPrivate` is set, so is everything else.
 */
export function addressPolicy(typed: URL, allowPrivate: boolean): AddressPolicy {
  if (allowPrivate || nonPublicHost(typed.hostname) !== undefined) return ALLOW_ALL;
  const typedHost = bareHost(typed.hostname);
  return {
    refusal(url) {
      const { hostname } = typeof url === 'string' ? new URL(url) : url;
      if (bareHost(hostname) === typedHost) return undefined;
      const kind = nonPublicHost(hostname);
      if (kind === undefined) return undefined;
      return `refused ${hostname}: ${kind}, named by the server rather than typed by you (pass --allow-private to allow it)`;
    },
  };
}
