import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { AddressPolicy } from './address-policy.js';
import type { Exchange, RecordingFetch } from './recording-fetch.js';

/** Where the protected resource metadata was found: the challenge's URL, path shape A, or the root (shape B). */
export type ResourceMetadataSource = 'header' | 'path' | 'root';

/** A metadata URL that was tried and did not give a document, with what happened ("HTTP 404", a network error). */
export interface TriedUrl {
  readonly url: string;
  readonly outcome: string;
}

export interface ResourceMetadataFound {
  readonly document: OAuthProtectedResourceMetadata;
  readonly url: string;
  readonly source: ResourceMetadataSource;
}

export interface AuthorizationServerFound {
  /** As the protected resource metadata lists it (or the server's origin, in the 2025-03-26 fallback). */
  readonly server: string;
  readonly metadata?: AuthorizationServerMetadata;
  readonly metadataUrl?: string;
  readonly tried: readonly TriedUrl[];
}

export interface Discovery {
  /** The MCP server URL discovery started from. */
  readonly url: URL;
  readonly resourceMetadata?: ResourceMetadataFound;
  /** The candidates that failed, in the order they were tried. */
  readonly resourceMetadataTried: readonly TriedUrl[];
  /**
   * No protected resource metadata anywhere: the 2025-03-26 behaviour, where the MCP server's origin is the
   * authorization server (and, without its metadata, /authorize, /token and /register at that origin).
   */
  readonly legacy: boolean;
  /** In the order the metadata lists them. */
  readonly authorizationServers: readonly AuthorizationServerFound[];
  /** The hosts this run may contact, which also judges the endpoints discovered. */
  readonly addresses: AddressPolicy;
}

/** `jwks_uri`: typed for OpenID Connect metadata only, but RFC 8414 metadata may carry it too. */
export function jwksUriOf(metadata: AuthorizationServerMetadata | undefined): string | undefined {
  return metadata !== undefined && 'jwks_uri' in metadata && typeof metadata.jwks_uri === 'string' ? metadata.jwks_uri : undefined;
}

const PRM_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * RFC 9728 §3.1 and the MCP client's order: the challenge's `resource_metadata` as given, then path shape A, then
 * root B. The well-known suffix goes between the host and the path, and the query stays (RFC 9728 §3.1: "path and
 * query components"): a server that serves one resource per query (`/mcp?tenant=a`) has one document per query.
 */
function resourceMetadataCandidates(url: URL, headerUrl: string | undefined): [string, ResourceMetadataSource][] {
  const path = url.pathname.replace(/\/$/, '');
  const candidates: [string, ResourceMetadataSource][] = [];
  if (headerUrl !== undefined) candidates.push([headerUrl, 'header']);
  if (path !== '') candidates.push([new URL(`${PRM_WELL_KNOWN}${path}${url.search}`, url).href, 'path']);
  candidates.push([new URL(`${PRM_WELL_KNOWN}${path === '' ? url.search : ''}`, url).href, 'root']);
  return candidates.filter(([candidate], index) => candidates.findIndex(([other]) => other === candidate) === index);
}

function outcomeOf(exchange: Exchange | undefined, error: unknown): string {
  if (exchange?.error !== undefined) return exchange.error;
  if (exchange?.status !== undefined && (exchange.status < 200 || exchange.status >= 300)) return `HTTP ${exchange.status}`;
  return `not a valid document: ${describeInvalidDocument(error)}`;
}

/** A schema error as `field: problem; …` (zod issues carry no values), any other error as its message. */
function describeInvalidDocument(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'issues' in error && Array.isArray(error.issues)) {
    return (error.issues as { path?: unknown[]; message?: string }[])
      .map((issue) => `${issue.path?.join('.') || '(document)'}: ${issue.message ?? 'invalid'}`)
      .join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}

async function findResourceMetadata(
  url: URL,
  headerUrl: string | undefined,
  http: RecordingFetch,
): Promise<{ found?: ResourceMetadataFound; tried: TriedUrl[] }> {
  const tried: TriedUrl[] = [];
  for (const [candidate, source] of resourceMetadataCandidates(url, headerUrl)) {
    if (!URL.canParse(candidate)) {
      tried.push({ url: candidate, outcome: 'not an absolute URL' });
      continue;
    }
    const before = http.exchanges.length;
    try {
      const document = await discoverOAuthProtectedResourceMetadata(url, { resourceMetadataUrl: candidate }, http.fetch);
      return { found: { document, url: candidate, source }, tried };
    } catch (error) {
      tried.push({ url: candidate, outcome: outcomeOf(http.exchanges.slice(before).at(-1), error) });
    }
  }
  return { tried };
}

/** RFC 8414 first, then the OpenID Connect variants, in the SDK's order for issuers with and without a path. */
async function findAuthorizationServerMetadata(server: string, http: RecordingFetch): Promise<AuthorizationServerFound> {
  const before = http.exchanges.length;
  const exchanges = () => http.exchanges.slice(before);
  // The SDK retries a URL once after a network error: one entry per URL, its last outcome.
  const failures = () => [
    ...new Map(
      exchanges()
        .filter((exchange) => exchange.status === undefined || exchange.status >= 300)
        .map((exchange) => [exchange.url, { url: exchange.url, outcome: outcomeOf(exchange, undefined) }] as const),
    ).values(),
  ];
  try {
    const metadata = await discoverAuthorizationServerMetadata(server, { fetchFn: http.fetch });
    if (metadata === undefined) return { server, tried: failures() };
    return { server, metadata, metadataUrl: exchanges().at(-1)?.url, tried: failures() };
  } catch (error) {
    const last = exchanges().at(-1);
    const tried = failures().filter((entry) => entry.url !== last?.url);
    return { server, tried: [...tried, { url: last?.url ?? server, outcome: outcomeOf(last, error) }] };
  }
}

/**
 * The MCP client's discovery (MCP authorization, "Authorization Server Discovery"): protected resource metadata
 * from the challenge's URL or the well-known locations, then each listed authorization server's metadata. Without
 * protected resource metadata it falls back, as 2025-03-26 clients do, to the server's origin. Fetches through
 * `http`, so every request is bounded and recorded.
 */
export async function discover(url: URL, resourceMetadataUrl: string | undefined, http: RecordingFetch): Promise<Discovery> {
  const { found, tried } = await findResourceMetadata(url, resourceMetadataUrl, http);
  const servers = found ? (found.document.authorization_servers ?? []) : [new URL('/', url).href];
  const authorizationServers: AuthorizationServerFound[] = [];
  for (const server of servers) authorizationServers.push(await findAuthorizationServerMetadata(server, http));
  return { url, resourceMetadata: found, resourceMetadataTried: tried, legacy: found === undefined, authorizationServers, addresses: http.addresses };
}
