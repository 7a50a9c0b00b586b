import { errors, type ClientMetadata } from 'oidc-provider';
import { isLoopbackHostname, parseUrl } from './redirect-uris.js';
import { isJsonObject } from '../auth/fetch-json.js';

/** Limits for fetching a Client ID Metadata Document (both the built-in https path and the dev loopback path). */
export const CLIENT_METADATA_DOCUMENT_LIMITS = {
  maxBytes: 64 * 1024,
  timeoutMs: 3000,
  /** Bounds on the cache lifetime taken from Cache-Control max-age; no header → not cached. */
  cacheSeconds: { min: 0, max: 3600 },
  maxCachedDocuments: 100,
} as const;

/** A metadata-document client authenticates with its own keys or not at all: a shared secret cannot be published. */
const SHARED_SECRET_AUTH_METHODS: ReadonlySet<string> = new Set([
  'client_secret_basic',
  'client_secret_post',
  'client_secret_jwt',
]);

/**
 * Development mode only: an `http` client_id on a loopback host, with a path, written in canonical form (so that
 * dot segments, an upper-case host or a default port cannot make two spellings of one document).
 */
export function isLoopbackClientIdUrl(id: string): boolean {
  const url = parseUrl(id);
  return (
    url !== undefined &&
    url.protocol === 'http:' &&
    isLoopbackHostname(url.hostname) &&
    url.pathname !== '/' &&
    url.username === '' &&
    url.password === '' &&
    !id.includes('#') &&
    url.href === id
  );
}

/** The fields the MCP authorization spec requires besides `client_id`. */
export function hasRequiredDocumentFields(metadata: { readonly client_name?: unknown; readonly redirect_uris?: unknown }): boolean {
  const { client_name: name, redirect_uris: uris } = metadata;
  return (
    typeof name === 'string' &&
    name.trim() !== '' &&
    Array.isArray(uris) &&
    uris.length > 0 &&
    uris.every((uri) => typeof uri === 'string')
  );
}

/** Validates a fetched document for the client_id `url`; every failure is an `invalid_client_metadata` error. */
export function parseClientMetadataDocument(url: string, body: string): ClientMetadata {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    throw new errors.InvalidClientMetadata('client_id metadata document is not valid JSON');
  }
  if (!isJsonObject(document)) {
    throw new errors.InvalidClientMetadata('client_id metadata document is not a JSON object');
  }
  if (document.client_id !== url) {
    throw new errors.InvalidClientMetadata('client_id metadata document client_id does not match its URL');
  }
  if (!hasRequiredDocumentFields(document)) {
    throw new errors.InvalidClientMetadata('client_id metadata document needs client_name and redirect_uris');
  }
  if ('client_secret' in document || 'client_secret_expires_at' in document) {
    throw new errors.InvalidClientMetadata('client_id metadata document must not contain a client secret');
  }
  const authMethod = document.token_endpoint_auth_method;
  if (typeof authMethod === 'string' && SHARED_SECRET_AUTH_METHODS.has(authMethod)) {
    throw new errors.InvalidClientMetadata('client_id metadata document must not use a shared-secret auth method');
  }
  return { ...document, client_id: url };
}

/** Seconds a document may be reused: `no-store`/`no-cache` → 0, else `max-age` clamped to the limits, else 0. */
export function cacheLifetimeSeconds(cacheControl: string | null): number {
  const { min, max } = CLIENT_METADATA_DOCUMENT_LIMITS.cacheSeconds;
  if (cacheControl === null) return min;
  const directives = cacheControl.toLowerCase().split(',').map((part) => part.trim());
  if (directives.some((directive) => directive === 'no-store' || directive === 'no-cache')) return 0;
  const maxAge = directives.find((directive) => /^max-age=\d+$/.test(directive));
  if (maxAge === undefined) return min;
  return Math.min(max, Math.max(min, Number(maxAge.slice('max-age='.length))));
}
