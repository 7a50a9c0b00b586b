import type { HostPolicy } from '../config/types.js';
import { isLoopbackHost } from '../config/url.js';

/** The hostname of a Host header or Origin, lowercased; `undefined` when it does not parse. */
function hostnameOf(authority: string): string | undefined {
  try {
    return new URL(`http://${authority}`).hostname;
  } catch {
    return undefined;
  }
}

function originHostname(origin: string): string | undefined {
  try {
    return new URL(origin).hostname;
  } catch {
    return undefined;
  }
}

/**
 * DNS rebinding protection (MCP transports: servers MUST validate Origin; local servers are the target): may a
 * request with this Host and Origin use an MCP endpoint at all, before any authentication?
 *
 * - `allowed_hosts`, when set: the Host header must name one of them (with or without its port).
 * - a gateway whose `public_url` is a loopback address: the Host must be a loopback name or address unless listed
 *   in `allowed_hosts`, and a present Origin must be a loopback origin or one the route's `cors.allowed_origins`
 *   names explicitly (`*` does not count: a rebinding page would always match it).
 */
export function rebindingRefused(
  policy: HostPolicy,
  host: string | undefined,
  origin: string | undefined,
  explicitOrigins: ReadonlySet<string>,
): boolean {
  const authority = host?.toLowerCase();
  const hostname = authority === undefined ? undefined : hostnameOf(authority);
  const listed = authority !== undefined && hostname !== undefined && (policy.allowedHosts.has(authority) || policy.allowedHosts.has(hostname));
  if (policy.allowedHosts.size > 0 && !listed) return true;
  if (!policy.localOnly) return false;
  if (!listed && (hostname === undefined || !isLoopbackHost(hostname))) return true;
  if (origin === undefined || explicitOrigins.has(origin.toLowerCase())) return false;
  const originHost = originHostname(origin);
  return originHost === undefined || !isLoopbackHost(originHost);
}
