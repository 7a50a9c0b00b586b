/** Hostnames RFC 8252 treats as loopback (the same set oidc-provider uses); `URL.hostname` keeps IPv6 brackets. */
const LOOPBACK_HOSTNAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackHostname(hostname: string): boolean {
  return LOOPBACK_HOSTNAMES.has(hostname.toLowerCase());
}

export function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * MCP authorization: redirect URIs must be https or loopback http. No fragment (RFC 6749 §3.1.2) and no userinfo,
 * which only serves to disguise the real host on a consent page.
 */
export function isAllowedRedirectUri(value: string): boolean {
  const url = parseUrl(value);
  if (!url || url.hash !== '' || value.includes('#') || url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHostname(url.hostname);
}
