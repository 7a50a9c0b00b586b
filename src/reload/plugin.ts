import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayError } from '../errors.js';
import type { RuntimeSwitch } from './runtime-switch.js';

/** A request on its way through the gateway, with the reply that will answer it. */
export type PendingRequest = readonly [request: FastifyRequest, reply: FastifyReply];

export interface PendingRequests {
  /** Requests still receiving their body that nothing has answered: what shutdown refuses at once. */
  halfSent(): PendingRequest[];
  /** Requests whose answer has not started (no status line sent yet). */
  unanswered(): PendingRequest[];
}

export interface RequestLifecycle<T> {
  /** The runtime the request was pinned to when it arrived. */
  readonly runtimeOf: (request: FastifyRequest) => T;
  readonly pending: PendingRequests;
}

interface Tracked<T> {
  readonly reply: FastifyReply;
  readonly runtime: T;
}

/**
 * One hook and one close listener per request for everything a request's lifetime needs: it pins the runtime
 * current when it arrives, released when its response closes (a reload never changes the config a request, or an
 * open stream, runs on), and it is tracked until then for shutdown (checklist K10). `refuse` may turn it away at
 * once (draining). Register before any hook that may refuse a request.
 */
export function registerRequestLifecycle<T>(
  app: FastifyInstance,
  runtimes: RuntimeSwitch<T>,
  refuse: (request: FastifyRequest) => GatewayError | undefined = () => undefined,
): RequestLifecycle<T> {
  const tracked = new Map<FastifyRequest, Tracked<T>>();
  app.addHook('onRequest', (request, reply, done) => {
    const pin = runtimes.pin();
    tracked.set(request, { reply, runtime: pin.value });
    reply.raw.once('close', () => {
      tracked.delete(request);
      pin.release();
    });
    done(refuse(request));
  });
  const select = (keep: (request: FastifyRequest, reply: FastifyReply) => boolean): PendingRequest[] => {
    const selected: PendingRequest[] = [];
    for (const [request, { reply }] of tracked) if (keep(request, reply)) selected.push([request, reply]);
    return selected;
  };
  return {
    runtimeOf: (request) => tracked.get(request)?.runtime ?? runtimes.current(),
    pending: {
      halfSent: () => select((request, reply) => !request.raw.complete && !reply.sent),
      unanswered: () => select((_request, reply) => !reply.sent && !reply.raw.headersSent),
    },
  };
}
