import type { HostPolicy } from '../config/types.js';
import { isLoopbackHost } from '../config/url.js';

/** A Host header value: its hostname (lowercased), and whether that names this machine. */
interface HostFacts {
  readonly hostname: string;
  readonly loopback: boolean;
}

/** Host header values seen, parsed: clients send the same few on every request. */
const hosts = new Map<string, HostFacts | undefined>();
const MAX_REMEMBERED_HOSTS = 256;

/** `undefined` when the value does not parse as a host. Parsed once per distinct value. */
function hostFactsOf(authority: string): HostFacts | undefined {
  if (hosts.has(authority)) return hosts.get(authority);
  let facts: HostFacts | undefined;
  try {
    const { hostname } = new URL(`http://${authority}`);
    facts = { hostname, loopback: isLoopbackHost(hostname) };
  } catch {
    facts = undefined;
  }
  if (hosts.size >= MAX_REMEMBERED_HOSTS) hosts.clear();
  hosts.set(authority, facts);
  return facts;
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
  if (policy.allowedHosts.size === 0 && !policy.localOnly) return false;
  const authority = host?.toLowerCase();
  const facts = authority === undefined ? undefined : hostFactsOf(authority);
  const listed = authority !== undefined && facts !== undefined && (policy.allowedHosts.has(authority) || policy.allowedHosts.has(facts.hostname));
  if (policy.allowedHosts.size > 0 && !listed) return true;
  if (!policy.localOnly) return false;
  if (!listed && !facts?.loopback) return true;
  if (origin === undefined || explicitOrigins.has(origin.toLowerCase())) return false;
  const originHost = originHostname(origin);
  return originHost === undefined || !isLoopbackHost(originHost);
}
