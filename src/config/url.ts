/**
 * URL rules for config values. Operators' URLs are advertised to clients (authorization_servers, resource) or
 * fetched by the gateway (issuer metadata, JWKS, introspection): clients have acted on hostile metadata URLs
 * (mcp-remote CVE-2025-6514) and fetches can be steered at cloud metadata services, so the rules are strict and
 * nothing is normalised silently.
 */

export interface UrlRules {
  /** Reject link-local and cloud metadata hosts (everything the gateway fetches or advertises). */
  readonly blockInternalHosts: boolean;
  /** Require the exact WHATWG serialisation (lowercase scheme/host, no default port, no encodable characters). */
  readonly requireNormalForm: boolean;
}

/** Characters a URL here never needs and shells, HTML or headers give meaning to. */
const UNSAFE_CHARACTERS = /[\s\p{Cc}"'`<>\\{}|^$();&!*]/u;

const METADATA_HOSTS = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  '100.100.100.200',
  '168.63.129.16',
  '[fd00:ec2::254]',
]);

/** Why `value` breaks `rules`, or `undefined`. Never echoes anything but the normal form of a parsed URL. */
export function urlProblem(value: string, rules: UrlRules): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return `scheme "${url.protocol}" is not allowed; use https`;
  }
  if (url.username !== '' || url.password !== '') return 'must not contain userinfo (user:password@)';
  if (value.includes('#')) return 'must not contain a fragment';
  if (value.includes('?')) return 'must not contain a query';
  if (UNSAFE_CHARACTERS.test(value)) return 'must not contain spaces, quotes, backslashes or shell metacharacters';
  if (rules.requireNormalForm && !isNormalForm(url, value)) return `is not in normal form; write "${url.href}"`;
  if (rules.blockInternalHosts && isInternalHost(url.hostname)) {
    return 'host is link-local or a cloud metadata endpoint';
  }
  return undefined;
}

/** Exactly `href`, or `href` without the slash WHATWG adds to an empty path (`https://as.example.com`). */
function isNormalForm(url: URL, value: string): boolean {
  return value === url.href || (url.pathname === '/' && value === url.origin);
}

/** http:// to anything but this machine: allowed only with `allow_insecure_http`. */
export function isInsecureHttp(value: string): boolean {
  const url = new URL(value);
  return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
}

export function isLoopbackHost(hostname: string): boolean {
  const host = withoutTrailingDot(hostname);
  if (host === 'localhost' || host.endsWith('.localhost') || host === '[::1]') return true;
  return ipv4Of(host)?.[0] === 127;
}

function isInternalHost(hostname: string): boolean {
  const host = withoutTrailingDot(hostname);
  if (METADATA_HOSTS.has(host)) return true;
  // fe80::/10: first hextet fe80..febf.
  if (/^\[fe[89ab][0-9a-f]:/.test(host)) return true;
  const ipv4 = ipv4Of(host);
  if (!ipv4) return false;
  return (ipv4[0] === 169 && ipv4[1] === 254) || METADATA_HOSTS.has(ipv4.join('.'));
}

function withoutTrailingDot(hostname: string): string {
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
}

/** Octets of a dotted IPv4 host or an IPv4-mapped IPv6 host (`[::ffff:a9fe:a9fe]`), as WHATWG serialises them. */
function ipv4Of(host: string): number[] | undefined {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return host.split('.').map(Number);
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(host);
  if (!mapped) return undefined;
  const [high, low] = [parseInt(mapped[1] ?? '', 16), parseInt(mapped[2] ?? '', 16)];
  return [high >> 8, high & 0xff, low >> 8, low & 0xff];
}
