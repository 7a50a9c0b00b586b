import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IntrospectionSettings } from '../../src/config/types.js';
import { Secret } from '../../src/config/secret.js';

/** One request the introspection endpoint received. */
export interface IntrospectionCall {
  readonly form: URLSearchParams;
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly token: string | null;
}

/** What to answer: an HTTP response, never answering (`hang`), or a dropped connection (`reset`). */
export type Reply = { readonly status?: number; readonly contentType?: string; readonly body: string } | 'hang' | 'reset';

export type Responder = (call: IntrospectionCall) => Reply | Promise<Reply>;

export interface TestIntrospectionServer {
  readonly endpoint: URL;
  readonly calls: IntrospectionCall[];
  /** The most requests that were being answered at the same time. */
  readonly maxInFlight: number;
  respond(responder: Responder): void;
  /** Resolves once `count` requests have arrived. */
  waitForCalls(count: number): Promise<void>;
  close(): Promise<void>;
}

export const json = (document: unknown, status = 200): Reply => ({ status, body: JSON.stringify(document) });
export const active = (claims: Record<string, unknown>): Reply => json({ active: true, ...claims });
export const inactive: Reply = json({ active: false });

/** A controllable RFC 7662 endpoint on 127.0.0.1, port 0, counting the calls it gets. */
export async function startIntrospectionServer(): Promise<TestIntrospectionServer> {
  let responder: Responder = () => inactive;
  const calls: IntrospectionCall[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const call = {
        form,
        authorization: request.headers.authorization,
        contentType: request.headers['content-type'],
        token: form.get('token'),
      };
      calls.push(call);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      response.on('close', () => (inFlight -= 1));
      for (const waiter of waiters.filter((w) => calls.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      void Promise.resolve(responder(call)).then((reply) => {
        if (reply === 'hang') return;
        if (reply === 'reset') return void request.socket.destroy();
        response.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
        response.end(reply.body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: new URL(`http://127.0.0.1:${port}/introspect`),
    calls,
    get maxInFlight() {
      return maxInFlight;
    },
    respond(next) {
      responder = next;
    },
    waitForCalls(count) {
      if (calls.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export const INTROSPECTION_SECRET = 'introspection-canary-secret-5c1e';

/** Settings for tests: basic auth, 1 s timeout, 30 s clock tolerance, 5 min max TTL, 30 s negative TTL; override what a test needs. */
export function introspectionSettings(
  endpoint: URL,
  overrides: Partial<IntrospectionSettings> = {},
): IntrospectionSettings {
  return {
    endpoint,
    clientId: 'gateway',
    clientSecret: new Secret(INTROSPECTION_SECRET),
    authMethod: 'client_secret_basic',
    privateKey: undefined,
    issuer: 'https://as.example.test',
    acceptMissingAudience: false,
    acceptMissingIssuer: false,
    timeout: 1_000,
    clockTolerance: 30_000,
    maxTtl: 300_000,
    negativeTtl: 30_000,
    ...overrides,
  };
}

/** A deferred promise, for holding AS answers until a test releases them. */
export function deferred(): { readonly promise: Promise<void>; release(): void } {
  let release = (): void => undefined;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}
