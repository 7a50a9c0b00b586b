import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { recordingFetch } from '../../../src/client/recording-fetch.js';
import { startSilentServer } from '../../helpers/net.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** A server that answers every request with headers and a first event at once, the rest when `finish` is called. */
async function startHeldStream(): Promise<{ readonly url: string; finish(): void }> {
  const held: ServerResponse[] = [];
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: first\n\n');
    held.push(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    finish: () => {
      for (const response of held.splice(0)) response.end('data: last\n\n');
    },
  };
}

async function silentUrl(): Promise<string> {
  const silent = await startSilentServer();
  cleanups.push(() => silent.close());
  return `http://127.0.0.1:${new URL(silent.url).port}/mcp`;
}

/** A fetch that fails as undici does for a header value it refuses: quoting the value. */
const refusingFetch = (url: string | URL, init?: RequestInit): Promise<Response> => {
  const value = new Headers(init?.headers).get('x-echo') ?? '';
  return Promise.reject(new TypeError(`Headers.append: "${value} ${String(url)}" is an invalid header value.`));
};

const connectionRefused = (): Promise<Response> => Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) }));

describe('recording fetch: what a failed request leaves behind', () => {
  it('G1: a request with an Authorization header: neither the record nor the thrown error carries the error text', async () => {
    const http = recordingFetch({ timeoutMs: 10_000, fetch: refusingFetch });
    const failure = await http.fetch('http://127.0.0.1:1/mcp', { method: 'POST', headers: { Authorization: 'Bearer SECRET-token', 'x-echo': 'SECRET-token' } }).catch((error: unknown) => error);
    expect(String(failure)).not.toContain('SECRET');
    expect(http.exchanges).toEqual([{ method: 'POST', url: 'http://127.0.0.1:1/mcp', error: 'failed (the error text is not shown: the request carried a token)' }]);
  });

  it.each([
    ['a plain object', (authorization: Record<string, string>) => authorization],
    ['a Headers', (authorization: Record<string, string>) => new Headers(authorization)],
    ['pairs', (authorization: Record<string, string>) => Object.entries(authorization)],
  ])('G1: with credentials in %s, a network error is named by its code only', async (_name, headers) => {
    const http = recordingFetch({ timeoutMs: 10_000, fetch: connectionRefused });
    await expect(http.fetch('http://127.0.0.1:1/mcp', { headers: headers({ authorization: 'Bearer t' }) })).rejects.toThrow('GET http://127.0.0.1:1/mcp: ECONNREFUSED');
    expect(http.exchanges.at(-1)?.error).toBe('ECONNREFUSED');
  });

  it('without credentials, the cause is recorded in full and the error passes through unchanged', async () => {
    const http = recordingFetch({ timeoutMs: 10_000, fetch: connectionRefused });
    await expect(http.fetch('http://127.0.0.1:1/.well-known/oauth-protected-resource')).rejects.toThrow('fetch failed');
    expect(http.exchanges.at(-1)?.error).toBe('connect ECONNREFUSED 127.0.0.1:1');
  });
});

describe('recording fetch: the time limit', () => {
  it('a server that accepts the connection and never answers: the request fails, "timed out"', async () => {
    const http = recordingFetch({ timeoutMs: 100 });
    const url = await silentUrl();
    await expect(http.fetch(url, { method: 'POST' })).rejects.toThrow('timed out after 0.1 s');
    expect(http.exchanges).toEqual([{ method: 'POST', url, error: 'timed out after 0.1 s' }]);
  });

  it('G2: it bounds the wait for the response headers, not the body: a stream still open after the limit is not cut', async () => {
    // Long enough for the first response's headers on a loaded machine; the silent request below waits it out.
    const http = recordingFetch({ timeoutMs: 2_000 });
    const stream = await startHeldStream();
    const response = await http.fetch(stream.url);
    // A request started afterwards with the same limit times out, so the first request's limit has passed too.
    await expect(http.fetch(await silentUrl())).rejects.toMatchObject({ name: 'TimeoutError' });
    stream.finish();
    expect(await response.text()).toBe('data: first\n\ndata: last\n\n');
  });
});
