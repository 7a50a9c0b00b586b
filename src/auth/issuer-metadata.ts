import { GatewayError } from '../decision/index.js';
import { fetchJson, isJsonObject } from './fetch-json.js';

export interface DiscoveryOptions {
  readonly fetch?: typeof fetch;
  /** Per metadata request. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/**
 * Metadata URLs to try, in order: RFC 8414 §3.1 (well-known inserted before the issuer's path), the same for
 * OpenID Connect, then OpenID Connect Discovery 1.0 §4 (well-known appended to the issuer). A terminating `/` of
 * the issuer path is removed first (RFC 8414 §3.1), so `https://as/` has no path.
 */
export function metadataCandidates(issuer: string): string[] {
  const { origin, pathname } = new URL(issuer);
  const path = pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  if (path === '') {
    return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  }
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

/**
 * The `jwks_uri` of the first metadata document that answers 200 with JSON whose `issuer` equals the configured
 * issuer exactly (RFC 8414 §3.3: otherwise the document must not be used) and whose `jwks_uri` is https (http
 * only on a loopback host). Throws `auth_unavailable` when no candidate qualifies.
 */
export async function discoverJwksUri(issuer: string, options: DiscoveryOptions): Promise<URL> {
  for await (const metadata of issuerMetadata(issuer, options)) {
    const jwksUri = metadataUrl(metadata.jwks_uri);
    if (jwksUri) return jwksUri;
  }
  throw new GatewayError('auth_unavailable', { reason: 'issuer_metadata_unavailable' });
}

/**
 * The first metadata document of `issuer` (candidates in order) that `accept` takes, or `undefined`. Only documents
 * naming exactly this issuer are offered (RFC 8414 §3.3).
 */
export async function discoverIssuerMetadata<T>(
  issuer: string,
  options: DiscoveryOptions,
  accept: (metadata: Readonly<Record<string, unknown>>) => T | undefined,
): Promise<T | undefined> {
  for await (const metadata of issuerMetadata(issuer, options)) {
    const accepted = accept(metadata);
    if (accepted !== undefined) return accepted;
  }
  return undefined;
}

async function* issuerMetadata(issuer: string, options: DiscoveryOptions): AsyncGenerator<Record<string, unknown>> {
  for (const candidate of metadataCandidates(issuer)) {
    const result = await fetchJson(new URL(candidate), {
      fetch: options.fetch ?? fetch,
      timeoutMs: options.timeoutMs,
      accept: 'application/json',
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (result.ok && isJsonObject(result.body) && result.body.issuer === issuer) yield result.body;
  }
}

/** An endpoint URL from a metadata document: https, or http on a loopback host. */
export function metadataUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string' || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname))) return url;
  return undefined;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}
