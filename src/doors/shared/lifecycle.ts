import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DecisionState, GatewayError } from '../../decision/index.js';
import { InFlightList, type InFlightEntry } from '../../lib/in-flight-list.js';
import { afterTurn } from '../../observability/after-turn.js';
import type { RuntimeSwitch } from '../../reload/runtime-switch.js';

/**
 * What the lifecycle, the observers and the refusals read of a request, whichever door serves it: fastify's
 * request has these fields, and so has the proxy door's own (doors/proxy/plugin.ts, on Node's request).
 */
export interface LifecycleRequest {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly raw: IncomingMessage;
  /** The decision about an MCP request (src/decision/); null on other paths. */
  readonly decision: DecisionState | null;
}

/** The answering side of a request, whichever door serves it. */
export interface Responder {
  readonly response: ServerResponse;
  /** The door has handed an answer over (fastify's `reply.sent`). */
  readonly sent: boolean;
  /** Answers with a refusal the way the door answers any refusal (the response table's, counted and logged). */
  refuse(error: GatewayError): void;
}

/** A request on its way through the gateway, with what will answer it. */
export type PendingRequest = readonly [request: LifecycleRequest, responder: Responder];

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

export interface RequestLifecycleOptions<T, R extends LifecycleRequest = LifecycleRequest> {
  /** May turn a request away at once (draining). */
  readonly refuse?: (request: R) => GatewayError | undefined;
  /**
   * Told once per request: when its answer starts (with the status), or when the client went away before any
   * answer (no status); with the milliseconds since the request arrived. Told after the turn that handed the
   * answer to the socket (`afterTurn`), like nginx's log phase: what it does (audit line, metrics) is not part of
   * the client's wait.
   */
  readonly onAnswered?: (request: R, runtime: T, status: number | undefined, latencyMs: number) => void;
  /** Milliseconds, monotonic; injected in tests. */
  readonly now?: () => number;
}

/**
 * One lifecycle for every door of a listener: fastify's hooks (`registerRequestLifecycle`) and the proxy door on
 * Node's own request and response call the same functions.
 */
export interface RequestTracker<T, R extends LifecycleRequest = LifecycleRequest> {
  /**
   * A request arrived: pins the runtime current now (released when its response closes), lists the request for
   * shutdown. Returns the refusal it must get at once (draining), if any.
   */
  track(request: R, responder: Responder): GatewayError | undefined;
  /**
   * The request's answer starts with `status`. Returns true when the answer must close the connection: an
   * answer given before the request's body was read (Node would otherwise read and discard that body to keep the
   * connection alive, so a refused client could still make the gateway wait).
   */
  answering(request: R, status: number, bodyRead: boolean): boolean;
  /** The runtime the request was pinned to when it arrived. */
  runtimeOf(request: R): T;
  /** Counts the server's connections (for `connectionsWithoutRequest`); once per server. */
  watch(server: Server): void;
  readonly pending: PendingRequests;
}

interface Tracked<T, R> {
  readonly request: R;
  readonly responder: Responder;
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
type TrackedMessage<T, R> = IncomingMessage & { [TRACKED]?: InFlightEntry<Tracked<T, R>> };

/** The request announced a body (Content-Length other than 0, or chunked). */
export function declaresBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** An answer given before the body was read closes the connection, for fastify's answers: see `RequestTracker.answering`. */
export function closeIfBodyUnread(request: FastifyRequest, reply: FastifyReply): void {
  if (request.body === undefined && declaresBody(request.headers)) void reply.header('connection', 'close');
}

/**
 * One record and one close listener per request for everything a request's lifetime needs: it pins the runtime
 * current when it arrives, released when its response closes (a reload never changes the config a request, or an
 * open stream, runs on), and it is tracked until then for shutdown. `onAnswered` hears of every request once
 * (metrics, audit).
 */
export function createRequestTracker<T, R extends LifecycleRequest = LifecycleRequest>(
  runtimes: RuntimeSwitch<T>,
  options: RequestLifecycleOptions<T, R> = {},
): RequestTracker<T, R> {
  const inFlight = new InFlightList<Tracked<T, R>>();
  const { refuse, onAnswered } = options;
  const now = options.now ?? (() => performance.now());

  function answered(entry: Tracked<T, R>, status: number | undefined): void {
    if (entry.answered) return;
    entry.answered = true;
    if (!onAnswered) return;
    const latencyMs = now() - entry.startedAt;
    afterTurn(() => onAnswered(entry.request, entry.runtime, status, latencyMs));
  }

  function closed(this: ServerResponse): void {
    const message: TrackedMessage<T, R> = this.req;
    const listed = message[TRACKED];
    if (!listed) return;
    message[TRACKED] = undefined;
    inFlight.remove(listed);
    listed.value.release();
    answered(listed.value, undefined);
  }

  const connections = new Set<Socket>();
  const trackedOf = (request: R) => (request.raw as TrackedMessage<T, R>)[TRACKED]?.value;
  const select = (keep: (request: R, responder: Responder) => boolean): PendingRequest[] => {
    const selected: PendingRequest[] = [];
    for (const { request, responder } of inFlight) if (keep(request, responder)) selected.push([request, responder]);
    return selected;
  };

  return {
    track(request, responder) {
      const pin = runtimes.pin();
      const entry: Tracked<T, R> = { request, responder, runtime: pin.value, release: pin.release, startedAt: now(), answered: false };
      const message: TrackedMessage<T, R> = request.raw;
      message[TRACKED] = inFlight.add(entry);
      responder.response.on('close', closed);
      return refuse?.(request);
    },
    answering(request, status, bodyRead) {
      const tracked = trackedOf(request);
      if (tracked) answered(tracked, status);
      return !bodyRead && declaresBody(request.raw.headers);
    },
    runtimeOf: (request) => trackedOf(request)?.runtime ?? runtimes.current(),
    watch(server) {
      server.on('connection', (socket: Socket) => {
        connections.add(socket);
        socket.once('close', () => connections.delete(socket));
      });
    },
    pending: {
      halfSent: () => select((request, responder) => !request.raw.complete && !responder.sent),
      unanswered: () => select((_request, responder) => !responder.sent && !responder.response.headersSent),
      connectionsWithoutRequest() {
        const carrying = new Set<Socket>();
        for (const { request } of inFlight) carrying.add(request.raw.socket);
        return [...connections].filter((socket) => !carrying.has(socket));
      },
    },
  };
}

/** How a fastify door answers a refusal (doors/shared/refusal.ts `sendRefusal`). */
export type FastifyRefusal = (request: FastifyRequest, reply: FastifyReply, error: GatewayError) => void;

/** A fastify reply as the lifecycle's responder: shutdown refuses through the door's own refusal. */
class FastifyResponder implements Responder {
  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly send: FastifyRefusal,
  ) {}

  get response(): ServerResponse {
    return this.reply.raw;
  }

  get sent(): boolean {
    return this.reply.sent;
  }

  refuse(error: GatewayError): void {
    this.send(this.request, this.reply, error);
  }
}

/**
 * The tracker on a fastify app: every request is tracked from its first hook (refused there while draining), and
 * every answer fastify sends is told of (closing the connection when the body was not read). Register before any
 * hook that may refuse a request.
 */
export function serveLifecycle<T>(app: FastifyInstance, tracker: RequestTracker<T, FastifyRequest>, send: FastifyRefusal): void {
  tracker.watch(app.server);
  app.addHook('onRequest', (request, reply, done) => {
    done(tracker.track(request, new FastifyResponder(request, reply, send)));
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (tracker.answering(request, reply.statusCode, request.body !== undefined)) void reply.header('connection', 'close');
    done(null, payload);
  });
}

/** A fastify app's own lifecycle (the decision listener's): `createRequestTracker` served by `serveLifecycle`. */
export function registerRequestLifecycle<T>(
  app: FastifyInstance,
  runtimes: RuntimeSwitch<T>,
  send: FastifyRefusal,
  options: RequestLifecycleOptions<T, FastifyRequest> = {},
): RequestTracker<T, FastifyRequest> {
  const tracker = createRequestTracker(runtimes, options);
  serveLifecycle(app, tracker, send);
  return tracker;
}
