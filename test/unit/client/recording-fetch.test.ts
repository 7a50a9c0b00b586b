import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { addressPolicy, type AddressPolicy } from '../../../src/client/address-policy.js';
import { recordingFetch } from '../../../src/client/recording-fetch.js';
import { startSilentServer } from '../../helpers/net.js';

const cleanups: (() => Promise<void>)[] = [];
/** Everything on loopback is allowed: the tests' servers are there. */
const addresses = addressPolicy(new URL('http://127.0.0.1/'), false);
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
    const http = recordingFetch({ timeoutMs: 10_000, addresses, fetch: refusingFetch });
    const failure = await http.fetch('http://127.0.0.1:1/mcp', { method: 'POST', headers: { Authorization: 'Bearer SECRET-token', 'x-echo': 'SECRET-token' } }).catch((error: unknown) => error);
    expect(String(failure)).not.toContain('SECRET');
    expect(http.exchanges).toEqual([{ method: 'POST', url: 'http://127.0.0.1:1/mcp', error: 'failed (the error text is not shown: the request carried a token)' }]);
  });

  it.each([
    ['a plain object', (authorization: Record<string, string>) => authorization],
    ['a Headers', (authorization: Record<string, string>) => new Headers(authorization)],
    ['pairs', (authorization: Record<string, string>) => Object.entries(authorization)],
  ])('G1: with credentials in %s, a network error is named by its code only', async (_name, headers) => {
    const http = recordingFetch({ timeoutMs: 10_000, addresses, fetch: connectionRefused });
    await expect(http.fetch('http://127.0.0.1:1/mcp', { headers: headers({ authorization: 'Bearer t' }) })).rejects.toThrow('GET http://127.0.0.1:1/mcp: ECONNREFUSED');
    expect(http.exchanges.at(-1)?.error).toBe('ECONNREFUSED');
  });

  it('without credentials, the cause is recorded in full and the error passes through unchanged', async () => {
    const http = recordingFetch({ timeoutMs: 10_000, addresses, fetch: connectionRefused });
    await expect(http.fetch('http://127.0.0.1:1/.well-known/oauth-protected-resource')).rejects.toThrow('fetch failed');
    expect(http.exchanges.at(-1)?.error).toBe('connect ECONNREFUSED 127.0.0.1:1');
  });
});

describe('recording fetch: the time limit', () => {
  it('a server that accepts the connection and never answers: the request fails, "timed out"', async () => {
    const http = recordingFetch({ timeoutMs: 100, addresses });
    const url = await silentUrl();
    await expect(http.fetch(url, { method: 'POST' })).rejects.toThrow('timed out after 0.1 s');
    expect(http.exchanges).toEqual([{ method: 'POST', url, error: 'timed out after 0.1 s' }]);
  });

  it('G2: it bounds the wait for the response headers, not the body: a stream still open after the limit is not cut', async () => {
    // Long enough for the first response's headers on a loaded machine; the silent request below waits it out.
    const http = recordingFetch({ timeoutMs: 2_000, addresses });
    const stream = await startHeldStream();
    const response = await http.fetch(stream.url);
    // A request started afterwards with the same limit times out, so the first request's limit has passed too.
    await expect(http.fetch(await silentUrl())).rejects.toMatchObject({ name: 'TimeoutError' });
    stream.finish();
    expect(await response.text()).toBe('data: first\n\ndata: last\n\n');
  });
});

/** A server on `host` that redirects `/redirect` to `target` and answers everything else with 200, counting requests. */
async function startServer(host: string, target?: () => string): Promise<{ readonly origin: string; readonly paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((request, response) => {
    paths.push(`${request.method ?? 'GET'} ${request.url ?? ''} ${request.headers.authorization === undefined ? '' : 'with authorization'}`.trim());
    if (request.url === '/redirect' && target !== undefined) response.writeHead(307, { location: target() }).end();
    else response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  });
  return { origin: `http://${host}:${(server.address() as AddressInfo).port}`, paths };
}

/** Refuses one host, allows the rest: the mechanism under test is where the policy is asked, not what it says. */
function refusing(host: string): AddressPolicy {
  return { refusal: (url) => (new URL(url).hostname === host ? `refused ${host}: test policy` : undefined) };
}

describe('recording fetch: the address policy decides every request and every redirect hop', () => {
  it('a request to a refused host fails before any connection: recorded with the refusal', async () => {
    const inside = await startServer('127.0.0.2');
    const http = recordingFetch({ timeoutMs: 5_000, addresses: refusing('127.0.0.2') });
    await expect(http.fetch(`${inside.origin}/x`)).rejects.toMatchObject({ cause: { message: 'refused 127.0.0.2: test policy' } });
    expect(http.exchanges).toEqual([{ method: 'GET', url: `${inside.origin}/x`, error: 'refused 127.0.0.2: test policy' }]);
    expect(inside.paths).toEqual([]);
    await http.close();
  });

  it('a redirect from an allowed host to a refused one is not followed: the refused host sees nothing', async () => {
    const inside = await startServer('127.0.0.2');
    const outside = await startServer('127.0.0.1', () => `${inside.origin}/secret`);
    const http = recordingFetch({ timeoutMs: 5_000, addresses: refusing('127.0.0.2') });
    await expect(http.fetch(`${outside.origin}/redirect`)).rejects.toThrow('fetch failed');
    expect(http.exchanges.at(-1)?.error).toBe('refused 127.0.0.2: test policy');
    expect(outside.paths).toEqual(['GET /redirect']);
    expect(inside.paths).toEqual([]);
    await http.close();
  });

  it('a redirect between allowed hosts is followed for a request without credentials', async () => {
    const second = await startServer('127.0.0.2');
    const first = await startServer('127.0.0.1', () => `${second.origin}/metadata`);
    const http = recordingFetch({ timeoutMs: 5_000, addresses });
    expect((await http.fetch(`${first.origin}/redirect`)).status).toBe(200);
    expect(second.paths).toEqual(['GET /metadata']);
    await http.close();
  });

  it('a request carrying a token never follows a redirect: the 307 comes back and the token goes nowhere else', async () => {
    const second = await startServer('127.0.0.2');
    const first = await startServer('127.0.0.1', () => `${second.origin}/mcp`);
    const http = recordingFetch({ timeoutMs: 5_000, addresses });
    const response = await http.fetch(`${first.origin}/redirect`, { method: 'POST', headers: { authorization: 'Bearer token' }, body: '{}' });
    expect(response.status).toBe(307);
    expect(first.paths).toEqual(['POST /redirect with authorization']);
    expect(second.paths).toEqual([]);
    await http.close();
  });
});
