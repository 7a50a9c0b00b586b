import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors.js';
import type { RuntimeSwitch } from './runtime-switch.js';

/**
 * Every request pins the runtime current when it arrives and releases it when its response closes, so a reload
 * never changes the config a request (or an open stream) runs on. Returns the lookup of a request's runtime.
 * Register before any hook that may refuse a request.
 */
export function registerRuntimePinning<T>(app: FastifyInstance, runtimes: RuntimeSwitch<T>): (request: FastifyRequest) => T {
  const pinned = new WeakMap<FastifyRequest, T>();
  app.addHook('onRequest', (request, reply, done) => {
    const pin = runtimes.pin();
    pinned.set(request, pin.value);
    reply.raw.once('close', pin.release);
    done();
  });
  return (request) => pinned.get(request) ?? runtimes.current();
}

/**
 * fastify fixes its body limit when it is built; a reload may lower `limits.max_body_bytes`. A declared
 * Content-Length over the request's runtime limit is refused here, before the body is read; a chunked body is
 * measured once it is complete (proxy/plugin.ts content-type parser). The start config's limit stays the ceiling
 * on what is ever buffered.
 */
export function registerRuntimeBodyLimit(app: FastifyInstance): void {
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const limit = request.decision?.maxBodyBytes;
    done(limit !== undefined && Number(request.headers['content-length']) > limit ? new GatewayError('payload_too_large') : null, payload);
  });
}

/** A request on its way through the gateway, with the reply that will answer it. */
export type PendingRequest = readonly [request: FastifyRequest, reply: FastifyReply];

export interface PendingRequests {
  /** Requests still receiving their body that nothing has answered: what shutdown refuses at once. */
  halfSent(): PendingRequest[];
  /** Requests whose answer has not started (no status line sent yet). */
  unanswered(): PendingRequest[];
}

/** Tracks every request from its arrival until its response closes, for shutdown (checklist K10). */
export function registerPendingRequests(app: FastifyInstance): PendingRequests {
  const pending = new Set<PendingRequest>();
  app.addHook('onRequest', (request, reply, done) => {
    const entry: PendingRequest = [request, reply];
    pending.add(entry);
    reply.raw.once('close', () => pending.delete(entry));
    done();
  });
  const select = (keep: (entry: PendingRequest) => boolean) => [...pending].filter(keep);
  return {
    halfSent: () => select(([request, reply]) => !request.raw.complete && !reply.sent),
    unanswered: () => select(([, reply]) => !reply.sent && !reply.raw.headersSent),
  };
}
