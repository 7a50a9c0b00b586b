import { checkResourceAllowed, resourceUrlFromServerUrl } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import { isLoopbackHost } from '../config/url.js';

/** How a protected resource metadata `resource` relates to the MCP server URL a client is using. */
export type ResourceMatch =
  /** The same URL once parsed (RFC 9728 §3.3). */
  | 'same'
  /** Same origin, and its path is a prefix of the server's: clients that allow this (the SDK) send it as `resource`. */
  | 'prefix'
  | 'different';

/** The RFC 8707 form of an MCP server URL: the URL without its fragment. */
export function canonicalResource(url: URL): string {
  return resourceUrlFromServerUrl(url).href;
}

export function matchResource(resource: string, url: URL): ResourceMatch {
  if (!URL.canParse(resource)) return 'different';
  if (canonicalResource(new URL(resource)) === canonicalResource(url)) return 'same';
  return checkResourceAllowed({ requestedResource: url, configuredResource: resource }) ? 'prefix' : 'different';
}

/** https, or http to this machine (MCP authorization: communication security; RFC 8252 §7.3 loopback). */
export function isSecureOrLoopback(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}
