import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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

/** Counts bytes through and fails with 413 past `limit`. */
function byteCap(limit: number): Transform {
  let received = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      received += chunk.length;
      callback(received > limit ? new GatewayError('payload_too_large') : null, received > limit ? undefined : chunk);
    },
  });
}

/**
 * fastify fixes its body limit when it is built; this applies the limit of the runtime a request runs on
 * (`limits.max_body_bytes` after a reload). The fixed limit of the start config remains the ceiling.
 */
export function registerRuntimeBodyLimit(app: FastifyInstance): void {
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const limit = request.mcp?.maxBodyBytes;
    if (limit === undefined) {
      done(null, payload);
      return;
    }
    if (Number(request.headers['content-length']) > limit) {
      done(new GatewayError('payload_too_large'));
      return;
    }
    const capped = byteCap(limit);
    payload.on('error', (error) => capped.destroy(error));
    done(null, payload.pipe(capped));
  });
}
