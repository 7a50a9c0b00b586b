import { describe, expect, it } from 'vitest';
import { createLoopbackClientResolver } from '../../../src/authserver/loopback-client-resolver.js';

const ID = 'http://127.0.0.1:4000/client.json';
const VALID = JSON.stringify({ client_id: ID, client_name: 'Client', redirect_uris: ['http://127.0.0.1:9/cb'] });

interface FakeNetwork {
  readonly fetch: typeof globalThis.fetch;
  readonly requests: { url: string; init: RequestInit | undefined }[];
}

/** Stands in for the client's web server: answers every request with `respond()`. */
function network(respond: () => Response | Promise<Response>): FakeNetwork {
  const requests: { url: string; init: RequestInit | undefined }[] = [];
  return {
    requests,
    fetch: async (input, init) => {
      requests.push({ url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, init });
      return respond();
    },
  };
}

function json(body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, { status: 200, headers: { 'content-type': 'application/json', ...headers } });
}

async function errorCode(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return (error as { error?: unknown }).error;
  }
  throw new Error('expected a rejection');
}

describe('createLoopbackClientResolver', () => {
  it('fetches without following redirects, with a timeout, and returns the validated document', async () => {
    const net = network(() => json(VALID));
    const metadata = await createLoopbackClientResolver({ fetch: net.fetch })(ID);
    expect(metadata).toMatchObject({ client_id: ID, client_name: 'Client' });
    expect(net.requests).toHaveLength(1);
    expect(net.requests[0]?.init?.redirect).toBe('manual');
    expect(net.requests[0]?.init?.signal).toBeInstanceOf(AbortSignal);
  });

  it('keeps a document for its max-age, then fetches it again', async () => {
    let now = 1_000_000;
    const net = network(() => json(VALID, { 'cache-control': 'max-age=60' }));
    const resolve = createLoopbackClientResolver({ fetch: net.fetch, now: () => now });
    await resolve(ID);
    now += 59_000;
    await resolve(ID);
    expect(net.requests).toHaveLength(1);
    now += 2_000;
    await resolve(ID);
    expect(net.requests).toHaveLength(2);
  });

  it('does not cache a document without Cache-Control', async () => {
    const net = network(() => json(VALID));
    const resolve = createLoopbackClientResolver({ fetch: net.fetch });
    await resolve(ID);
    await resolve(ID);
    expect(net.requests).toHaveLength(2);
  });

  it('shares one fetch between concurrent lookups', async () => {
    let release: (response: Response) => void = () => undefined;
    const net = network(() => new Promise<Response>((resolve) => (release = resolve)));
    const resolve = createLoopbackClientResolver({ fetch: net.fetch });
    const lookups = Promise.all([resolve(ID), resolve(ID), resolve(ID)]);
    await Promise.resolve();
    release(json(VALID));
    expect(await lookups).toHaveLength(3);
    expect(net.requests).toHaveLength(1);
  });

  it.each([
    ['a redirect', () => new Response(null, { status: 302, headers: { location: 'http://127.0.0.1:4000/other.json' } })],
    ['HTTP 500', () => new Response('oops', { status: 500 })],
    ['a declared size over 64 KiB', () => json(VALID, { 'content-length': String(65 * 1024) })],
    ['a streamed body over 64 KiB', () => new Response(new Blob([VALID, ' '.repeat(65 * 1024)]).stream(), { status: 200 })],
    ['a network failure', () => Promise.reject(new TypeError('fetch failed: connect ECONNREFUSED 127.0.0.1:4000'))],
  ])('refuses %s as invalid_client', async (_name, respond) => {
    const resolve = createLoopbackClientResolver({ fetch: network(respond).fetch });
    expect(await errorCode(resolve(ID))).toBe('invalid_client');
  });

  it('does not cache a failure', async () => {
    let body = '{}';
    const net = network(() => json(body, { 'cache-control': 'max-age=600' }));
    const resolve = createLoopbackClientResolver({ fetch: net.fetch });
    expect(await errorCode(resolve(ID))).toBe('invalid_client_metadata');
    body = VALID;
    await expect(resolve(ID)).resolves.toMatchObject({ client_id: ID });
  });
});
