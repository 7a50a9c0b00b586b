import { METHODS, type IncomingMessage } from 'node:http';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { GatewayError } from '../../decision/index.js';
import { declaresBody } from './lifecycle.js';

/**
 * Every door keeps a request's body as the exact bytes received, whatever its media type: what the decision
 * evaluates is what the upstream gets (no parser differential). On a fastify app the body is read by the same
 * `readRawBody` as the proxy door's, within `bodyLimit` (a declared length over it is refused before reading).
 */
export function keepRawBodies(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    if (Number(request.headers['content-length']) > bodyLimit) return done(new GatewayError('payload_too_large'), undefined);
    return readRawBody(payload, bodyLimit, (error, body) => done(error ?? null, body));
  });
}

/**
 * Every method Node parses reaches the door's hooks, so none is refused before authentication
 * (test/security/methods.test.ts). CONNECT never becomes a request: Node hands it to the server's 'connect' event,
 * which the gateway leaves unset. Returns the methods to route.
 */
export function acceptEveryMethod(app: FastifyInstance): HTTPMethods[] {
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  return app.supportedMethods.filter((method) => method !== 'CONNECT');
}

/** Methods whose body is never read (as fastify treats them): a body they declare is left unread (its answer closes the connection). */
const BODYLESS_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'TRACE']);

/** The request's body is to be read: a method that carries one, and a declared length other than 0 or chunked. */
export function readsBody(message: IncomingMessage): boolean {
  return !BODYLESS_METHODS.has(message.method ?? '') && declaresBody(message.headers);
}

/**
 * The same raw body on Node's own request (the proxy door): the exact bytes received, at most `limit` of them
 * (`payload_too_large` as soon as more arrive; the declared length was checked before). A client that goes away
 * mid-body is a `bad_request` its closed connection never sees.
 */
export function readRawBody(message: IncomingMessage, limit: number, done: (error: GatewayError | undefined, body?: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const finish = (error: GatewayError | undefined, body?: Buffer): void => {
    message.off('data', onData);
    message.off('end', onEnd);
    message.off('error', onAborted);
    message.off('close', onClose);
    done(error, body);
  };
  function onData(chunk: Buffer): void {
    received += chunk.length;
    if (received > limit) finish(new GatewayError('payload_too_large'));
    else chunks.push(chunk);
  }
  function onEnd(): void {
    finish(undefined, chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks, received));
  }
  function onAborted(): void {
    finish(new GatewayError('bad_request', { status: 400, reason: 'request_aborted' }));
  }
  function onClose(): void {
    if (!message.complete) onAborted();
  }
  message.on('data', onData);
  message.on('end', onEnd);
  message.on('error', onAborted);
  message.on('close', onClose);
}
