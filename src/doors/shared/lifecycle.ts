import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayError } from '../../decision/index.js';
import { InFlightList, type InFlightEntry } from '../../lib/in-flight-list.js';
import { afterTurn } from '../../observability/after-turn.js';
import type { RuntimeSwitch } from '../../reload/runtime-switch.js';

/** A request on its way through the gateway, with the reply that will answer it. */
export type PendingRequest = readonly [request: FastifyRequest, reply: FastifyReply];

export interface PendingRequests {
  /** Requests still receiving their body that nothing has answered: what shutdown refuses at once. */
  halfSent(): PendingRequest[];
  /** Requests whose answer has not started (no status line sent yet). */
  unanswered(): PendingRequest[];
  /**
   * Open connections that carry no request the gateway holds: none sent yet, headers still arriving, or idle
   * between requests. Nothing is owed on them, so shutdown closes them instead of waiting (Node's own idle check
   * counts a connection whose headers never finish as busy, and would wait for it for the whole grace period).
   */
  connectionsWithoutRequest(): Socket[];
}

export interface RequestLifecycle<T> {
  /** The runtime the request was pinned to when it arrived. */
  readonly runtimeOf: (request: FastifyRequest) => T;
  readonly pending: PendingRequests;
}

export interface RequestLifecycleOptions<T> {
  /** May turn a request away at once (draining). */
  readonly refuse?: (request: FastifyRequest) => GatewayError | undefined;
  /**
   * Told once per request: when its answer starts (with the status), or when the client went away before any
   * answer (no status); with the milliseconds since the request arrived. Told after the turn that handed the
   * answer to the socket (`afterTurn`), like nginx's log phase: what it does (audit line, metrics) is not part of
   * the client's wait.
   */
  readonly onAnswered?: (request: FastifyRequest, runtime: T, status: number | undefined, latencyMs: number) => void;
  /** Milliseconds, monotonic; injected in tests. */
  readonly now?: () => number;
}

interface Tracked<T> {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly runtime: T;
  readonly release: () => void;
  readonly startedAt: number;
  answered: boolean;
}

const TRACKED = Symbol('tracked request');

/**
 * Kept on the raw request, which the response's own 'close' event reaches (`response.req`): one listener function
 * shared by all requests, and no lookup table.
 */
type TrackedMessage<T> = IncomingMessage & { [TRACKED]?: InFlightEntry<Tracked<T>> };

/** The request announced a body (Content-Length other than 0, or chunked). */
function declaresBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * An answer given before the request's body was read closes the connection. Node would otherwise
 * read and discard the body to keep the connection alive, so a refused client could still make the gateway wait.
 */
export function closeIfBodyUnread(request: FastifyRequest, reply: FastifyReply): void {
  if (request.body === undefined && declaresBody(request)) void reply.header('connection', 'close');
}

/**
 * One record and one close listener per request for everything a request's lifetime needs: it pins the runtime
 * current when it arrives, released when its response closes (a reload never changes the config a request, or an
 * open stream, runs on), and it is tracked until then for shutdown. Every answer given before the
 * request's body was read closes the connection (`closeIfBodyUnread`). `onAnswered` hears of every request once
 * (metrics, audit). Register before any hook that may refuse a request.
 */
export function registerRequestLifecycle<T>(app: FastifyInstance, runtimes: RuntimeSwitch<T>, options: RequestLifecycleOptions<T> = {}): RequestLifecycle<T> {
  const inFlight = new InFlightList<Tracked<T>>();
  const { refuse, onAnswered } = options;
  const now = options.now ?? (() => performance.now());

  function answered(entry: Tracked<T>, status: number | undefined): void {
    if (entry.answered) return;
    entry.answered = true;
    if (!onAnswered) return;
    const latencyMs = now() - entry.startedAt;
    afterTurn(() => onAnswered(entry.request, entry.runtime, status, latencyMs));
  }

  function closed(this: ServerResponse): void {
    const message: TrackedMessage<T> = this.req;
    const listed = message[TRACKED];
    if (!listed) return;
    message[TRACKED] = undefined;
    inFlight.remove(listed);
    listed.value.release();
    answered(listed.value, undefined);
  }

  const connections = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  app.addHook('onRequest', (request, reply, done) => {
    const pin = runtimes.pin();
    const entry: Tracked<T> = { request, reply, runtime: pin.value, release: pin.release, startedAt: now(), answered: false };
    const message: TrackedMessage<T> = request.raw;
    message[TRACKED] = inFlight.add(entry);
    reply.raw.on('close', closed);
    done(refuse?.(request));
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    closeIfBodyUnread(request, reply);
    const listed = (request.raw as TrackedMessage<T>)[TRACKED];
    if (listed) answered(listed.value, reply.statusCode);
    done(null, payload);
  });

  const select = (keep: (request: FastifyRequest, reply: FastifyReply) => boolean): PendingRequest[] => {
    const selected: PendingRequest[] = [];
    for (const { request, reply } of inFlight) if (keep(request, reply)) selected.push([request, reply]);
    return selected;
  };
  return {
    runtimeOf: (request) => (request.raw as TrackedMessage<T>)[TRACKED]?.value.runtime ?? runtimes.current(),
    pending: {
      halfSent: () => select((request, reply) => !request.raw.complete && !reply.sent),
      unanswered: () => select((_request, reply) => !reply.sent && !reply.raw.headersSent),
      connectionsWithoutRequest() {
        const carrying = new Set<Socket>();
        for (const { request } of inFlight) carrying.add(request.raw.socket);
        return [...connections].filter((socket) => !carrying.has(socket));
      },
    },
  };
}
