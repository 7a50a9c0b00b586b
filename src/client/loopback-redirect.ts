import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthorizationResponse } from './authorization-response.js';

export interface ExpectOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Checks the response that carries the state (its query), or throws why it is refused. */
  readonly check: (parameters: URLSearchParams) => AuthorizationResponse;
}

export interface RedirectListener {
  /** `http://127.0.0.1:<port>/callback` (RFC 8252 §7.3 loopback redirect). */
  readonly redirectUri: string;
  /**
   * Resolves with the next authorization response to the redirect URI whose `state` is `state`, as `check` accepts
   * it; rejects when `check` refuses it (an error response, no code, a wrong `iss`), at `timeoutMs`, or when `signal`
   * aborts. A response with a missing or different `state` gets an error page and is discarded, and the wait goes on
   * (MCP authorization: discard it; a forged or stale response must not end the sign-in). Call it before sending the
   * user to the authorization URL, so a fast response is not missed.
   */
  expect(state: string, options: ExpectOptions): Promise<AuthorizationResponse>;
  close(): Promise<void>;
}

const CALLBACK_PATH = '/callback';

function page(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  response.end(`<!doctype html><title>mcp-auth-gateway login</title><p>${text}</p>`);
}

interface Waiter {
  readonly state: string;
  readonly check: ExpectOptions['check'];
  /** Responses with a missing or different state, for the timeout message. */
  discarded: number;
  resolve(response: AuthorizationResponse): void;
  reject(error: Error): void;
}

/**
 * The loopback redirect endpoint of `login`: a one-path HTTP server on 127.0.0.1 and a free port. The browser page
 * it answers never shows the code; only the waiting `expect` call receives it.
 */
export async function startRedirectListener(): Promise<RedirectListener> {
  let waiter: Waiter | undefined;
  const settle = (outcome: { response: AuthorizationResponse } | { error: Error }): void => {
    const current = waiter;
    waiter = undefined;
    if (current === undefined) return;
    if ('response' in outcome) current.resolve(outcome.response);
    else current.reject(outcome.error);
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
      page(response, 404, 'Not found.');
      return;
    }
    if (waiter === undefined) {
      page(response, 409, 'No sign-in is in progress. Start it again from the command line.');
      return;
    }
    const params = url.searchParams;
    if (params.get('state') !== waiter.state) {
      page(response, 400, 'This response does not belong to the sign-in in progress and was discarded.');
      waiter.discarded += 1;
      return;
    }
    let checked: AuthorizationResponse;
    try {
      checked = waiter.check(params);
    } catch (error) {
      page(response, 400, 'The authorization response was refused. See the command line.');
      settle({ error: error instanceof Error ? error : new Error(String(error)) });
      return;
    }
    page(response, 200, 'Signed in. You can close this window and return to the command line.');
    settle({ response: checked });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    redirectUri: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    expect(state, { timeoutMs, signal, check }) {
      if (waiter !== undefined) return Promise.reject(new Error('an authorization is already in progress'));
      if (signal?.aborted === true) return Promise.reject(new Error('the authorization was abandoned'));
      return new Promise<AuthorizationResponse>((resolve, reject) => {
        const cleanup = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        const onAbort = () => settle({ error: new Error('the authorization was abandoned') });
        const current: Waiter = {
          state,
          check,
          discarded: 0,
          resolve: (response) => {
            cleanup();
            resolve(response);
          },
          reject: (error) => {
            cleanup();
            reject(error);
          },
        };
        const onTimeout = () => {
          const discarded = current.discarded === 0 ? '' : ` (${current.discarded} with a missing or different state discarded)`;
          settle({ error: new Error(`no authorization response within ${timeoutMs / 1000} s${discarded}`) });
        };
        const timer = setTimeout(onTimeout, timeoutMs);
        signal?.addEventListener('abort', onAbort, { once: true });
        waiter = current;
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        settle({ error: new Error('the redirect listener closed') });
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
