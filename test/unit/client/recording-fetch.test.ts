import { describe, expect, it } from 'vitest';
import { recordingFetch } from '../../../src/client/recording-fetch.js';

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
