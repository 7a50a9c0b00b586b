export type JsonFetchFailure = 'timeout' | 'unreachable' | 'status' | 'too_large' | 'not_json';

export type JsonFetchResult =
  | { readonly ok: true; readonly body: unknown }
  | { readonly ok: false; readonly failure: JsonFetchFailure };

export interface JsonFetchOptions {
  readonly fetch: typeof fetch;
  /** Bounds the whole exchange, body included. */
  readonly timeoutMs: number;
  readonly accept: string;
  /** Cancels the request early (verifier closed). */
  readonly signal?: AbortSignal;
}

/** A JWKS or metadata document is a few KiB; anything near this is not one. */
const MAX_BODY_BYTES = 512 * 1024;

/**
 * GETs a JSON document for the verifiers (JWKS, AS metadata). Never throws: every failure is a coded result so the
 * caller can map it to `auth_unavailable` without keeping an error that may carry request details. Redirects are
 * not followed (a 3xx is a failure), like jose's own JWKS fetch: the configured URL is the only place asked.
 */
export async function fetchJson(url: URL, options: JsonFetchOptions): Promise<JsonFetchResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const response = await options.fetch(url, {
      method: 'GET',
      redirect: 'manual',
      signal,
      headers: { accept: options.accept },
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      return { ok: false, failure: 'status' };
    }
    const text = await readCapped(response);
    if (text === undefined) return { ok: false, failure: 'too_large' };
    try {
      return { ok: true, body: JSON.parse(text) as unknown };
    } catch {
      return { ok: false, failure: 'not_json' };
    }
  } catch {
    return { ok: false, failure: timeout.aborted ? 'timeout' : 'unreachable' };
  }
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function readCapped(response: Response): Promise<string | undefined> {
  if (Number(response.headers.get('content-length')) > MAX_BODY_BYTES) {
    await response.body?.cancel();
    return undefined;
  }
  return readText(response.body, MAX_BODY_BYTES);
}

/** The body as UTF-8 text, `undefined` past `limit` bytes or when not UTF-8. */
export async function readText(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string | undefined> {
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    // Leaving the loop early cancels the stream and releases the connection.
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    return undefined;
  }
}
