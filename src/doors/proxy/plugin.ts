import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { finished, pipeline, Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Dispatcher } from 'undici';
import {
  admit,
  answerStarted,
  authorize,
  createDecisionState,
  GatewayError,
  isGatewayError,
  listRewrite,
  NO_RESPONSE_HEADERS,
  pathOf,
  recordAnswer,
  upstreamRefusal,
  type DecisionRuntime,
  type DecisionState,
  type ErrorResponse,
  type MessageRewrite,
} from '../../decision/index.js';
import { settle } from '../../lib/maybe-promise.js';
import { isEventStream, isJsonMediaType } from '../../lib/media-type.js';
import type { SseStreams } from '../../observability/sse-streams.js';
import type { LifecycleRequest, RequestTracker, Responder } from '../shared/lifecycle.js';
import { trackEventStream } from '../shared/observe.js';
import { acceptEveryMethod, keepRawBodies, readRawBody, readsBody } from '../shared/raw-body.js';
import { refusalOf, type RefusedRequest } from '../shared/refusal.js';
import { requestFacts } from '../shared/request-facts.js';
import { lazyRequestLogger } from '../shared/request-logger.js';
import type { DoorTracing, RequestSpan } from '../shared/tracing.js';
import { upstreamRequestHeaders, upstreamResponseHeaders, type OutgoingHeaders } from './headers.js';
import { createSseRewriter, MAX_FILTERED_MESSAGE_BYTES, readCapped, rewriteJsonBody, unfilterable } from './list-filter.js';
import { UpstreamCall, type UpstreamAnswer } from './upstream-call.js';
import { classifyUpstreamFailure } from './upstream-errors.js';

/**
 * The proxy door: the MCP requests of the configured routes, served on Node's own request and response, before
 * fastify routes anything (fastify keeps metadata, health, consent and the unmatched paths). The framework's
 * per-request machinery (routing, hooks, reply, content-type parsing) was most of what the gateway cost beyond a
 * bare node:http + undici proxy (bench/README.md, the proxy door's profile); what a request needs of it is here,
 * on the listener's one lifecycle (doors/shared/lifecycle.ts: pinning, tracking, draining, closing after an unread
 * body) and the shared raw body, refusal and observer glue. Traced, the door starts the request's span itself
 * (`DoorTracing.startRequest`): @fastify/otel never sees these requests.
 */
export interface ProxyDoorOptions {
  /** The main listener's lifecycle, shared with its fastify routes. */
  readonly lifecycle: RequestTracker<unknown>;
  /** The runtime this request runs on (pinned when it arrived, so a reload does not change it midway). */
  readonly current: (request: LifecycleRequest) => DecisionRuntime;
  /** Whether the current runtime has a route at this exact path: only those requests are the door's. */
  readonly routes: (path: string) => boolean;
  /** The named route's upstream connection pools, of that same pinned runtime. */
  readonly dispatcherOf: (request: LifecycleRequest, route: string) => Dispatcher;
  /** fastify's bound on a body being received (fixed at start; a reload may only lower the runtime's). */
  readonly maxBodyBytes: number;
  /** The answer to a refusal, counted and logged (doors/shared/refusal.ts `refusalAnswer`). */
  readonly refusal: (request: RefusedRequest, error: GatewayError) => ErrorResponse;
  /** Where a request's own log lines go (with its id bound, made on first use). */
  readonly logger: FastifyBaseLogger;
  /** Makes the request id (`X-Request-Id` when it is a plain token, else a UUID). */
  readonly requestId: (headers: IncomingHttpHeaders) => string;
  /** The event streams relayed to clients (gauge, shutdown). */
  readonly eventStreams: SseStreams;
  /** Told once per upstream exchange: its status (or how it failed) and the milliseconds to response headers. */
  readonly onUpstreamResult?: (request: LifecycleRequest, result: number | 'unreachable' | 'timeout', elapsedMs: number) => void;
  /** Spans, when `telemetry.traces` is set. */
  readonly tracing?: DoorTracing;
}

/** What fastify's reply adds to a whole body without a Content-Type (kept as it was). */
const OCTET_STREAM = 'application/octet-stream';
const PLAIN_TEXT = 'text/plain; charset=utf-8';

/**
 * One proxied request: what the decision, the lifecycle, the observers and the refusals read (the fields of
 * fastify's request they read), and how it is answered (the lifecycle's responder).
 */
class ProxyRequest implements LifecycleRequest, Responder, RefusedRequest {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  decision: DecisionState | null = null;
  /** The body was read whole: an answer then keeps the connection (`RequestTracker.answering`). */
  bodyRead = false;
  /** An answer was handed over (the lifecycle's `sent`). */
  sent = false;
  /** The request's span, when tracing is on. */
  readonly span: RequestSpan | undefined;
  #log: FastifyBaseLogger | undefined;

  constructor(
    readonly raw: IncomingMessage,
    readonly response: ServerResponse,
    private readonly door: ProxyDoorOptions,
  ) {
    this.id = door.requestId(raw.headers);
    this.method = raw.method ?? 'GET';
    this.url = raw.url ?? '/';
    this.span = door.tracing?.startRequest(raw, response);
  }

  get headers(): IncomingHttpHeaders {
    return this.raw.headers;
  }

  get log(): FastifyBaseLogger {
    return (this.#log ??= lazyRequestLogger(this.door.logger, { reqId: this.id }, {}));
  }

  /** The headers of an answer: the decision's CORS headers first, then the answer's own; the close after an unread body. */
  #begin(status: number, headers: Readonly<OutgoingHeaders>): OutgoingHeaders {
    this.sent = true;
    const cors = this.decision?.responseHeaders;
    const all: OutgoingHeaders = cors && cors !== NO_RESPONSE_HEADERS ? { ...cors, ...headers } : { ...headers };
    if (this.door.lifecycle.answering(this, status, this.bodyRead)) all.connection = 'close';
    return all;
  }

  /**
   * A whole answer in one write, with the length and default type fastify's reply gave it. Nothing when an answer
   * was already given (shutdown refused the request meanwhile).
   */
  sendWhole(status: number, headers: Readonly<OutgoingHeaders>, body: Buffer | string | undefined): void {
    if (this.sent) return;
    const all = this.#begin(status, headers);
    const response = this.response;
    if (body === undefined || (status >= 100 && status < 200) || status === 204) {
      if (body !== undefined) {
        delete all['content-type'];
        delete all['content-length'];
      } else if (status >= 200 && status !== 204 && status !== 304 && this.method !== 'HEAD') all['content-length'] = '0';
      response.writeHead(status, all);
      response.end();
      return;
    }
    all['content-type'] ??= typeof body === 'string' ? PLAIN_TEXT : OCTET_STREAM;
    if (this.method !== 'HEAD' || all['content-length'] === undefined) all['content-length'] = String(Buffer.byteLength(body));
    response.writeHead(status, all);
    response.end(body);
  }

  /**
   * A streamed answer, piped with backpressure. The headers go out with the first bytes: a stream that fails
   * before them is still answered with a refusal; after them the connection is cut. A client that goes away
   * ends the stream.
   */
  sendStream(status: number, headers: Readonly<OutgoingHeaders>, body: Readable): void {
    const all = this.#begin(status, headers);
    const response = this.response;
    response.statusCode = status;
    for (const name of Object.keys(all)) response.setHeader(name, all[name] as string | string[]);
    let sourceOpen = true;
    finished(body, { readable: true, writable: false }, (error) => {
      sourceOpen = false;
      if (!error) return;
      if (response.headersSent || response.destroyed) {
        response.destroy();
        return;
      }
      // Nothing went out yet: the refusal replaces the answer, without any of its headers.
      for (const name of response.getHeaderNames()) response.removeHeader(name);
      this.sent = false;
      this.fail(error);
    });
    finished(response, () => {
      if (sourceOpen) body.destroy();
    });
    body.pipe(response);
  }

  /** Any error as the refusal it maps to (a framework-style error becomes internal_error). */
  fail(error: unknown): void {
    this.refuse(refusalOf(error instanceof Error ? error : new Error(String(error))));
  }

  refuse(error: GatewayError): void {
    const answer = this.door.refusal(this, error);
    this.sendWhole(answer.statusCode, answer.headers, answer.body);
  }
}

/** The decision of a request that reached the handler: admitted, so its route and caller are known. */
function admittedState(request: ProxyRequest): DecisionState & { readonly entry: NonNullable<DecisionState['entry']> } {
  const state = request.decision;
  if (!state?.entry || !state.auth) throw new Error('MCP request handled without an admitted caller');
  return state as DecisionState & { readonly entry: NonNullable<DecisionState['entry']> };
}

/**
 * Abandons an upstream body (a whole one needs nothing). A destroyed stream errors with AbortError; without a
 * listener that error would be uncaught and take the process down.
 */
function discard(body: UpstreamAnswer['body']): void {
  if (!(body instanceof Readable)) return;
  body.on('error', () => undefined);
  body.destroy();
}

/** The upstream URL's own query when it has one, else the client's (what a transparent proxy forwards). */
function upstreamPath(upstream: URL, requestUrl: string): string {
  if (upstream.search !== '') return upstream.pathname + upstream.search;
  const queryStart = requestUrl.indexOf('?');
  return queryStart === -1 ? upstream.pathname : upstream.pathname + requestUrl.slice(queryStart);
}

/**
 * The request headers for the upstream. Content-Length is not on the allowlist: undici counts the body it sends (a
 * chunked request arrives without one; a body on a method that forwards none must not announce one).
 */
function outgoingHeaders(request: ProxyRequest, state: ReturnType<typeof admittedState>, forwardsBody: boolean, listFiltered: boolean, traced: boolean) {
  const headers = upstreamRequestHeaders(request.headers, state.upstreamHeaders, state.entry.route.upstream.forwardHeaders);
  // Traced, the call carries the gateway's own span as traceparent (set by the undici instrumentation), not the client's.
  if (traced) {
    delete headers.traceparent;
    delete headers.tracestate;
  }
  headers['x-request-id'] = request.id;
  if (forwardsBody) headers['content-type'] ??= 'application/json';
  else delete headers['content-type'];
  // The list filter has to read the answer: ask for it uncompressed.
  if (listFiltered) delete headers['accept-encoding'];
  return headers;
}

/** Answers up to this size that announce their length are read whole and sent in one write instead of piped. */
const SMALL_ANSWER_BYTES = 64 * 1024;

/**
 * Which answers are read whole: a small announced length and a Content-Type (a whole body without one would be
 * labelled `application/octet-stream`), never an event stream (it is relayed as it comes) nor a HEAD's (no body).
 */
function holdsWhole(headers: IncomingHttpHeaders): boolean {
  const length = Number(headers['content-length']);
  const contentType = headers['content-type'];
  return length >= 0 && length <= SMALL_ANSWER_BYTES && typeof contentType === 'string' && !isEventStream(contentType);
}

const neverWhole = (): boolean => false;

/** A rewrite reads the whole answer, up to `limit` bytes; `undefined` past it. */
async function wholeBody(body: UpstreamAnswer['body'], limit: number): Promise<Buffer | undefined> {
  if (!(body instanceof Readable)) return body.length > limit ? undefined : body;
  return readCapped(body, limit);
}

const EXCHANGE = Symbol('upstream exchange');

/**
 * One request's exchange with the upstream. Its call is aborted when the client goes away before the answer is
 * complete, even before headers, or when the gateway answered by itself meanwhile (503 at the
 * shutdown deadline). It gives the caller's slot back when the response closes. One close listener, shared by all
 * exchanges.
 */
class UpstreamExchange {
  clientGone = false;
  upstreamAnswered = false;
  call: UpstreamCall | undefined;
  releaseSlot: (() => void) | undefined;

  constructor(response: ExchangeResponse, releaseSlot: (() => void) | undefined) {
    this.releaseSlot = releaseSlot;
    response[EXCHANGE] = this;
    response.on('close', responseClosed);
  }
}

type ExchangeResponse = ServerResponse & { [EXCHANGE]?: UpstreamExchange };

function responseClosed(this: ExchangeResponse): void {
  const exchange = this[EXCHANGE];
  if (!exchange) return;
  this[EXCHANGE] = undefined;
  exchange.releaseSlot?.();
  if (this.writableFinished && exchange.upstreamAnswered) return;
  exchange.clientGone = !this.writableFinished;
  exchange.call?.abort();
}

/** Statuses whose body a client may read as the answer: any 2xx (the SDK client reads all but 202). */
function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * Sends the upstream's answer, rewriting the one list result when hiding entries (fails closed). The upstream's
 * status and headers are put on the answer only when nothing can fail any more, so a refusal never carries them.
 */
async function relay(request: ProxyRequest, state: ReturnType<typeof admittedState>, response: UpstreamAnswer, rewrite: MessageRewrite | undefined, eventStream: boolean): Promise<void> {
  // What the decision records once the upstream answered (session bindings), before the client sees the answer.
  const recorded = recordAnswer(state, { status: response.statusCode, sessionIdHeader: response.headers['mcp-session-id'] });
  if (recorded !== true && !(await recorded)) {
    request.log.warn({ route: state.entry.route.name }, 'session binding not stored; the session will be refused until the client re-initializes');
  }
  const contentType = response.headers['content-type'];
  const headers = upstreamResponseHeaders(response.headers);
  if (rewrite && isSuccess(response.statusCode)) {
    const encoding = response.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') throw unfilterable('list_response_encoded');
    if (eventStream && response.body instanceof Readable) {
      delete headers['content-length'];
      request.sendStream(response.statusCode, headers, pipeline(response.body, createSseRewriter(rewrite), () => undefined));
      if (request.method === 'GET') request.response.flushHeaders();
      return;
    }
    // An answer without a type is read too: empty (a 202 to a list method sent as a notification), it holds nothing.
    const json = isJsonMediaType(contentType);
    const body = json || contentType === undefined ? await wholeBody(response.body, MAX_FILTERED_MESSAGE_BYTES) : undefined;
    if (body?.length === 0) {
      request.sendWhole(response.statusCode, headers, body);
      return;
    }
    const rewritten = json && body ? rewriteJsonBody(body, rewrite) : undefined;
    if (!rewritten) throw unfilterable('list_response_unfilterable');
    headers['content-length'] = String(rewritten.length);
    request.sendWhole(response.statusCode, headers, rewritten);
    return;
  }
  // A small answer came whole (`holdsWhole`) and goes out in one write; any other is piped.
  if (response.body instanceof Readable) request.sendStream(response.statusCode, headers, response.body);
  else request.sendWhole(response.statusCode, headers, response.body);
  // A standalone GET stream may stay quiet for long: push its headers now so it does not look hung. A POST's
  // SSE answer brings its first event right behind the headers; a separate write would cost a wake-up.
  if (request.method === 'GET' && eventStream) request.response.flushHeaders();
}

/** The door's per-request steps, in the order they run; each goes on in the same turn when nothing waits. */
function proxyDoor(options: ProxyDoorOptions) {
  /** The decision's first stage, before the body is read: an unauthenticated client never makes the gateway buffer one. */
  function admitRequest(request: ProxyRequest): void {
    const runtime = options.current(request);
    const state = createDecisionState(runtime, requestFacts(request, runtime.config.trustedProxies), 'proxy');
    request.decision = state;
    request.span?.traceDecision(state);
    settle(
      () => admit(state),
      (error, answer) => {
        if (error) return request.fail(error);
        if (answer) return request.sendWhole(answer.status, answer.headers, undefined);
        // The runtime's limit (a reload may lower `limits.max_body_bytes`; raising it takes a restart): a declared
        // length over it is refused before the body is read, a chunked one as soon as it grows past it.
        const limit = Math.min(options.maxBodyBytes, state.maxBodyBytes);
        if (Number(request.headers['content-length']) > limit) return request.refuse(new GatewayError('payload_too_large'));
        if (!readsBody(request.raw)) return authorizeRequest(request, state, undefined);
        readRawBody(request.raw, limit, (bodyError, body) => {
          // Shutdown may have refused the request while its body was arriving.
          if (request.sent) return undefined;
          if (bodyError) return request.refuse(bodyError);
          request.bodyRead = true;
          // The body's events carry no context of the request's: its span is entered again.
          if (request.span) return request.span.run(() => authorizeRequest(request, state, body));
          return authorizeRequest(request, state, body);
        });
      },
    );
  }

  /** The decision's second stage, now that the body is complete; awaited only when it has to wait. */
  function authorizeRequest(request: ProxyRequest, state: DecisionState, body: Buffer | undefined): void {
    state.body = body;
    settle(
      () => authorize(state),
      (error) => {
        if (error) return request.fail(error);
        forward(request).catch((failure: unknown) => {
          if (!request.sent) request.fail(failure);
        });
      },
    );
  }

  async function forward(request: ProxyRequest): Promise<void> {
    const state = admittedState(request);
    const upstream = state.entry.route.upstream.url;
    const rewrite = listRewrite(state);
    const forwardsBody = request.method === 'POST';
    const exchange = new UpstreamExchange(request.response, state.releaseSlot);

    const startedAt = performance.now();
    const { span } = request;
    const startCall = () =>
      new UpstreamCall(
        options.dispatcherOf(request, state.entry.route.name),
        {
          origin: upstream.origin,
          path: upstreamPath(upstream, request.url),
          method: request.method,
          headers: outgoingHeaders(request, state, forwardsBody, rewrite !== undefined, span !== undefined),
          body: forwardsBody ? (state.body ?? null) : null,
        },
        request.method === 'HEAD' ? neverWhole : holdsWhole,
      );
    const call = span ? span.inMessageTrace(state.message, startCall) : startCall();
    exchange.call = call;
    let response: UpstreamAnswer;
    try {
      response = await call.answer;
    } catch (error) {
      if (exchange.clientGone || request.sent) return;
      // A small answer read whole can still break off after its headers: a failed relay, as for a streamed one.
      const { respondedAt } = call;
      if (respondedAt !== undefined) {
        options.onUpstreamResult?.(request, call.statusCode, respondedAt - startedAt);
        request.refuse(new GatewayError('upstream_unreachable', { reason: 'relay_failed', cause: error }));
        return;
      }
      const code = classifyUpstreamFailure(error);
      options.onUpstreamResult?.(request, code === 'upstream_timeout' ? 'timeout' : 'unreachable', performance.now() - startedAt);
      request.refuse(new GatewayError(code, { reason: 'upstream_request_failed', cause: error }));
      return;
    }

    exchange.upstreamAnswered = true;
    options.onUpstreamResult?.(request, response.statusCode, (call.respondedAt ?? performance.now()) - startedAt);
    if (request.sent) {
      discard(response.body);
      return;
    }
    const refused = upstreamRefusal(state, response.statusCode);
    if (refused) {
      // A small refusal was read whole, so the pooled connection stays usable; a streamed one is cut.
      discard(response.body);
      request.refuse(await refused);
      return;
    }
    try {
      // An event stream is counted while it is relayed (gauge, shutdown).
      const eventStream = response.body instanceof Readable && isEventStream(response.headers['content-type']);
      if (eventStream) trackEventStream(request.response, options.eventStreams);
      answerStarted(state, eventStream);
      await relay(request, state, response, rewrite, eventStream);
    } catch (error) {
      discard(response.body);
      if (!request.sent && !exchange.clientGone) {
        request.refuse(isGatewayError(error) ? error : new GatewayError('upstream_unreachable', { reason: 'relay_failed', cause: error }));
      }
    }
  }

  return admitRequest;
}

/**
 * The door, for the main listener's server (`FrontDoor.claim`): takes the requests on a configured route's exact
 * path, answers true when it did. The route table (not fastify's router) decides which paths exist, so a config
 * reload can add and remove routes. The upstream request goes straight to undici's dispatch (upstream-call.ts).
 */
export function createProxyDoor(options: ProxyDoorOptions): (message: IncomingMessage, response: ServerResponse) => boolean {
  const admitRequest = proxyDoor(options);
  const serve = (request: ProxyRequest): void => {
    try {
      const refused = options.lifecycle.track(request, request);
      if (refused) request.refuse(refused);
      else admitRequest(request);
    } catch (error) {
      if (!request.sent) request.fail(error);
    }
  };
  return (message, response) => {
    if (!options.routes(pathOf(message.url ?? '/'))) return false;
    const request = new ProxyRequest(message, response, options);
    // Traced, every step runs in the request's span (`RequestSpan.run`); untraced, nothing is allocated for it.
    if (request.span) request.span.run(() => serve(request));
    else serve(request);
    return true;
  };
}

/**
 * Every other path on the main listener that no fastify route claims: not a route (or one a reload removed
 * between), refused 404 by the response table before any body is read. Every method Node parses gets that
 * answer (none is refused before its path is known: test/security/methods.test.ts).
 */
export function registerUnmatchedPaths(app: FastifyInstance, maxBodyBytes: number): void {
  keepRawBodies(app, maxBodyBytes);
  app.route({
    method: acceptEveryMethod(app),
    url: '/*',
    exposeHeadRoute: false,
    onRequest: (_request, _reply, done) => done(new GatewayError('not_found')),
    handler: () => {
      throw new GatewayError('not_found');
    },
  });
}
