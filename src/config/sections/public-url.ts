import { z } from 'zod';
import { rule, strictUrl } from '../fields.js';
import { immutableSet } from '../freeze.js';
import { hostProblem } from '../rules.js';
import { compileTrustedProxies, trustedProxyProblem, type TrustedProxies } from '../trusted-proxies.js';
import { isLoopbackHost } from '../url.js';

/**
 * `public_url` and the top-level keys about the requests that reach it: which Host names it answers
 * (`allowed_hosts`), whose forwarding headers count (`trusted_proxies`), and whether plain http is allowed anywhere
 * (`allow_insecure_http`, applied in cross-section.ts).
 */

export const publicUrlKeys = {
  public_url: strictUrl('Public base URL of the gateway: base of resource URIs and metadata URLs.'),
  allowed_hosts: z
    .array(z.string().min(1).superRefine(rule(hostProblem)))
    .default([])
    .describe(
      'Host header values (name, or name:port) MCP endpoints answer; others get 403 (DNS rebinding protection). Default: [] (any Host; with a loopback public_url, loopback names only).',
    ),
  trusted_proxies: z
    .array(z.string().superRefine(rule(trustedProxyProblem)))
    .default([])
    .describe(
      'Peers (IP addresses or CIDR blocks) whose X-Forwarded-For and X-Forwarded-Host the gateway believes, on the main and the decision listener: an ingress or proxy in front that overwrites them. From any other peer those headers are ignored (the Host header and the peer address count). Default: [] (nobody).',
    ),
  allow_insecure_http: z
    .boolean()
    .default(false)
    .describe('Allow http:// URLs to non-loopback hosts (development only). Default: false.'),
};

type RawPublicUrl = z.output<z.ZodObject<typeof publicUrlKeys>>;

export interface HostPolicy {
  /** `public_url` is a loopback address: only loopback Host names and loopback (or listed) Origins. */
  readonly localOnly: boolean;
  /** `allowed_hosts`, lowercase; empty → any Host (unless local). */
  readonly allowedHosts: ReadonlySet<string>;
}

export interface PublicUrlSettings {
  readonly publicUrl: URL;
  readonly allowInsecureHttp: boolean;
  readonly hosts: HostPolicy;
  readonly trustedProxies: TrustedProxies;
}

/** What resource URIs and metadata URLs start with: `public_url` without a trailing slash. */
export function publicBase(raw: RawPublicUrl): string {
  return raw.public_url.replace(/\/$/, '');
}

export function compilePublicUrl(raw: RawPublicUrl): PublicUrlSettings {
  const publicUrl = new URL(publicBase(raw));
  return {
    publicUrl,
    allowInsecureHttp: raw.allow_insecure_http,
    hosts: {
      localOnly: isLoopbackHost(publicUrl.hostname),
      allowedHosts: immutableSet(raw.allowed_hosts.map((host) => host.toLowerCase())),
    },
    trustedProxies: compileTrustedProxies(raw.trusted_proxies),
  };
}
