import { errors, type ClientMetadata } from 'oidc-provider';
import {
  CLIENT_METADATA_DOCUMENT_LIMITS as LIMITS,
  cacheLifetimeSeconds,
  parseClientMetadataDocument,
} from './client-metadata-document.js';

export type ClientMetadataResolver = (clientId: string) => Promise<ClientMetadata>;

export interface LoopbackResolverOptions {
  readonly fetch?: typeof globalThis.fetch;
  readonly now?: () => number;
}

interface CachedDocument {
  readonly metadata: ClientMetadata;
  readonly expiresAt: number;
}

/** Reads at most `maxBytes` of the body; a larger (declared or actual) body is refused and the stream cancelled. */
async function readLimited(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    if (Number(response.headers.get('content-length') ?? '0') > maxBytes) throw new RangeError('body too large');
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      received += next.value.byteLength;
      if (received > maxBytes) throw new RangeError('body too large');
      chunks.push(next.value);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Development-mode Client ID Metadata Documents on loopback http URLs, which oidc-provider's built-in support
 * (https only, special-use addresses refused) will not fetch. Same rules otherwise: no redirects, a size and time
 * limit, the document validated against its URL, Cache-Control honoured, one fetch in flight per URL.
 * Callers only pass URLs accepted by `isLoopbackClientIdUrl`.
 */
export function createLoopbackClientResolver(options: LoopbackResolverOptions = {}): ClientMetadataResolver {
  const fetchDocument = options.fetch ?? globalThis.fetch;
  const now = options.now ?? Date.now;
  const cache = new Map<string, CachedDocument>();
  const pending = new Map<string, Promise<ClientMetadata>>();

  function remember(clientId: string, metadata: ClientMetadata, seconds: number): void {
    if (seconds <= 0) return;
    if (cache.size >= LIMITS.maxCachedDocuments) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(clientId, { metadata, expiresAt: now() + seconds * 1000 });
  }

  async function load(clientId: string): Promise<ClientMetadata> {
    let body: string;
    let cacheControl: string | null;
    try {
      const response = await fetchDocument(clientId, {
        redirect: 'manual',
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(LIMITS.timeoutMs),
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new RangeError('unexpected status');
      }
      cacheControl = response.headers.get('cache-control');
      body = await readLimited(response, LIMITS.maxBytes);
    } catch {
      // One fixed error: the cause may name internal addresses or echo the document.
      throw new errors.InvalidClient('client_id metadata document fetch failed');
    }
    const metadata = parseClientMetadataDocument(clientId, body);
    remember(clientId, metadata, cacheLifetimeSeconds(cacheControl));
    return metadata;
  }

  return async (clientId) => {
    const cached = cache.get(clientId);
    if (cached && cached.expiresAt > now()) return cached.metadata;
    cache.delete(clientId);
    const inFlight = pending.get(clientId);
    if (inFlight) return inFlight;
    const request = load(clientId).finally(() => pending.delete(clientId));
    pending.set(clientId, request);
    return request;
  };
}
