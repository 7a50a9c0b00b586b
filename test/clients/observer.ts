import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Exchange } from './evidence.js';

/** Query parameters worth keeping: those of an authorization request. Codes and tokens are never kept. */
const KEPT_QUERY = ['client_id', 'scope', 'code_challenge', 'code_challenge_method', 'resource'];

interface Pending {
  readonly server: Exchange['server'];
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly sentSessionId: boolean;
  status?: number;
  headers?: OutgoingHttpHeaders;
}

export interface HttpObserver {
  /** Exchanges seen so far, in arrival order; an answer still streaming shows its status and headers already. */
  exchanges(): Exchange[];
  close(): void;
}

function headerValue(headers: OutgoingHttpHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return value === undefined ? undefined : String(value);
}

/** Headers passed to writeHead as an object or as a flat [name, value, ...] list. */
function headersFrom(argument: unknown): OutgoingHttpHeaders {
  if (Array.isArray(argument)) {
    const headers: OutgoingHttpHeaders = {};
    for (let index = 0; index + 1 < argument.length; index += 2) {
      headers[String(argument[index]).toLowerCase()] = String(argument[index + 1]);
    }
    return headers;
  }
  if (typeof argument !== 'object' || argument === null) return {};
  return Object.fromEntries(Object.entries(argument).map(([name, value]) => [name.toLowerCase(), value as string]));
}

/**
 * Watches every request the gateway and the authorization server (both in this process) serve, through Node's
 * `http.server.request.start` diagnostics channel: the clients under test are never instrumented. Status and
 * headers are taken where Node writes them (writeHead), so streamed answers and fastify's direct writes count.
 */
export function observeHttp(ports: { readonly gateway: number; readonly authorizationServer: number }): HttpObserver {
  const seen: Pending[] = [];
  const onStart = (message: unknown) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const port = request.socket.localPort;
    const server = port === ports.gateway ? 'gateway' : port === ports.authorizationServer ? 'authorization-server' : undefined;
    if (server === undefined) return;
    const url = new URL(request.url ?? '/', 'http://observed');
    const query = Object.fromEntries(
      KEPT_QUERY.flatMap((name) => (url.searchParams.has(name) ? [[name, url.searchParams.get(name) ?? '']] : [])),
    );
    const pending: Pending = {
      server,
      method: request.method ?? '',
      path: url.pathname,
      query,
      sentSessionId: request.headers['mcp-session-id'] !== undefined,
    };
    seen.push(pending);
    const writeHead = response.writeHead.bind(response) as (...args: unknown[]) => ServerResponse;
    response.writeHead = ((...args: unknown[]) => {
      pending.status = Number(args[0]);
      const given = args.find((arg, index) => index > 0 && typeof arg === 'object');
      pending.headers = { ...headersFrom(response.getHeaders()), ...headersFrom(given) };
      return writeHead(...args);
    });
  };
  subscribe('http.server.request.start', onStart);
  return {
    exchanges: () =>
      seen.map((pending) => ({
        server: pending.server,
        method: pending.method,
        path: pending.path,
        query: pending.query,
        status: pending.status,
        contentType: headerValue(pending.headers, 'content-type'),
        sentSessionId: pending.sentSessionId,
        issuedSessionId: headerValue(pending.headers, 'mcp-session-id') !== undefined,
      })),
    close: () => unsubscribe('http.server.request.start', onStart),
  };
}
