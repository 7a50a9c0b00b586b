import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline, Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
  recordAnswer,
  upstreamRefusal,
  type DecisionRuntime,
  type DecisionState,
  type MessageRewrite,
} from '../../decision/index.js';
import { settle } from '../../lib/maybe-promise.js';
import { isEventStream, isJsonMediaType } from '../../lib/media-type.js';
import { trackEventStream } from '../shared/observe.js';
import type { DoorTracing } from '../shared/tracing.js';
import type { SseStreams } from '../../observability/sse-streams.js';
import { requestFacts } from '../shared/request-facts.js';
import { acceptEveryMethod, keepRawBodies } from '../shared/raw-body.js';
import { upstreamRequestHeaders, upstreamResponseHeaders } from './headers.js';
import { createSseRewriter, MAX_FILTERED_MESSAGE_BYTES, readCapped, rewriteJsonBody, unfilterable } from './list-filter.js';
import { UpstreamCall, type UpstreamAnswer } from './upstream-call.js';
import { classifyUpstreamFailure } from './upstream-errors.js';

export interface ProxyRoutesOptions {
  /** The runtime this request runs on (pinned when it arrived, so a reload does not change it midway). */
  readonly current: (request: FastifyRequest) => DecisionRuntime;
  /** The named route's upstream connection pools, of that same pinned runtime. */
  readonly dispatcherOf: (request: FastifyRequest, route: string) => Dispatcher;
  readonly maxBodyBytes: number;
  /** Sends a GatewayError the same way the error handler does. */
  readonly sendError: (request: FastifyRequest, reply: FastifyReply, error: GatewayError) => void;
  /** The event streams relayed to clients (gauge, shutdown). */
  readonly eventStreams: SseStreams;
  /** Told once per upstream exchange: its status (or how it failed) and the milliseconds to response headers. */
  readonly onUpstreamResult?: (request: FastifyRequest, result: number | 'unreachable' | 'timeout', elapsedMs: number) => void;
  /** Spans, when `telemetry.traces` is set. */
  readonly tracing?: DoorTracing;
}

/** The decision of a request that reached the handler: admitted, so its route and caller are known. */
function admittedState(request: FastifyRequest): DecisionState & { readonly entry: NonNullable<DecisionState['entry']> } {
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
function outgoingHeaders(request: FastifyRequest, state: ReturnType<typeof admittedState>, forwardsBody: boolean, listFiltered: boolean, traced: boolean) {
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
 * Which answers are read whole: a small announced length and a Content-Type (fastify would label bytes without
 * one `application/octet-stream`), never an event stream (it is relayed as it comes) nor a HEAD's (no body).
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
 * status and headers are put on the reply only when nothing can fail any more, so a refusal never carries them.
 */
async function relay(
  request: FastifyRequest,
  reply: FastifyReply,
  state: ReturnType<typeof admittedState>,
  response: UpstreamAnswer,
  rewrite: MessageRewrite | undefined,
  eventStream: boolean,
): Promise<void> {
  // What the decision records once the upstream answered (session bindings), before the client sees the answer.
  const recorded = recordAnswer(state, { status: response.statusCode, sessionIdHeader: response.headers['mcp-session-id'] });
  if (recorded !== true && !(await recorded)) {
    request.log.warn({ route: state.entry.route.name }, 'session binding not stored; the session will be refused until the client re-initializes');
  }
  const contentType = response.headers['content-type'];
  const relayStatusAndHeaders = () => reply.code(response.statusCode).headers(upstreamResponseHeaders(response.headers));
  if (rewrite && isSuccess(response.statusCode)) {
    const encoding = response.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') throw unfilterable('list_response_encoded');
    if (eventStream && response.body instanceof Readable) {
      relayStatusAndHeaders().removeHeader('content-length');
      void reply.send(pipeline(response.body, createSseRewriter(rewrite), () => undefined));
      if (request.method === 'GET') reply.raw.flushHeaders();
      return;
    }
    // An answer without a type is read too: empty (a 202 to a list method sent as a notification), it holds nothing.
    const json = isJsonMediaType(contentType);
    const body = json || contentType === undefined ? await wholeBody(response.body, MAX_FILTERED_MESSAGE_BYTES) : undefined;
    if (body?.length === 0) {
      void relayStatusAndHeaders().send(body);
      return;
    }
    const rewritten = json && body ? rewriteJsonBody(body, rewrite) : undefined;
    if (!rewritten) throw unfilterable('list_response_unfilterable');
    void relayStatusAndHeaders().header('content-length', String(rewritten.length)).send(rewritten);
    return;
  }
  // A small answer came whole (`holdsWhole`) and goes out in one write; any other is piped.
  void relayStatusAndHeaders().send(response.body);
  // A standalone GET stream may stay quiet for long: push its headers now so it does not look hung. A POST's
  // SSE answer brings its first event right behind the headers; a separate write would cost a wake-up.
  if (request.method === 'GET' && eventStream) reply.raw.flushHeaders();
}

/**
 * The MCP endpoints: every path not claimed by metadata or health routes lands here; the route table (not
 * fastify's router) decides which paths exist, so a config reload can add and remove routes. The upstream request
 * goes straight to undici: measured against @fastify/reply-from (bench/README.md), it costs less per request,
 * takes an abort signal, and uses the pools of the request's own pinned runtime.
 */
export function registerProxyRoutes(app: FastifyInstance, options: ProxyRoutesOptions): void {
  // The runtime limit (a reload may lower it) is checked once the body is complete; fastify's `bodyLimit`, fixed at
  // start, bounds what is buffered meanwhile.
  keepRawBodies(app, options.maxBodyBytes, (request) => request.decision?.maxBodyBytes);
  app.route({
    method: acceptEveryMethod(app),
    url: '/*',
    exposeHeadRoute: false,
    bodyLimit: options.maxBodyBytes,
    // The decision's first stage runs before the body is read, so an unauthenticated client never makes the
    // gateway buffer one; the second stage, in the handler, reads the body it was handed. A callback hook: when
    // the decision had nothing to wait for, the request goes on without a turn of the microtask queue.
    onRequest: (request, reply, done) => {
      const runtime = options.current(request);
      const state = createDecisionState(runtime, requestFacts(request, runtime.config.trustedProxies), 'proxy');
      request.decision = state;
      options.tracing?.traceDecision(request, state);
      settle(
        () => admit(state),
        (error, answer) => {
          if (error) return done(error);
          if (state.responseHeaders !== NO_RESPONSE_HEADERS) void reply.headers(state.responseHeaders);
          // An early answer ends the request here: a callback hook that replies does not call `done`.
          if (answer) return void reply.code(answer.status).headers(answer.headers).send();
          // fastify fixes its body limit at start; a reload may lower `limits.max_body_bytes`: a declared length
          // over this request's limit is refused here, before the body is read (a chunked one once it is complete).
          if (Number(request.headers['content-length']) > state.maxBodyBytes) return done(new GatewayError('payload_too_large'));
          return done();
        },
      );
    },
    handler: async (request, reply) => {
      // The decision's second stage, now that the body is complete; awaited only when it has to wait.
      if (!request.decision) throw new Error('MCP request state missing: the decision did not run');
      request.decision.body = Buffer.isBuffer(request.body) ? request.body : undefined;
      const authorizing = authorize(request.decision);
      if (authorizing instanceof Promise) await authorizing;
      const state = admittedState(request);
      const upstream = state.entry.route.upstream.url;
      const rewrite = listRewrite(state);
      const forwardsBody = request.method === 'POST';
      const exchange = new UpstreamExchange(reply.raw, state.releaseSlot);

      const startedAt = performance.now();
      const { tracing } = options;
      const startCall = () =>
        new UpstreamCall(
          options.dispatcherOf(request, state.entry.route.name),
          {
            origin: upstream.origin,
            path: upstreamPath(upstream, request.url),
            method: request.method,
            headers: outgoingHeaders(request, state, forwardsBody, rewrite !== undefined, tracing !== undefined),
            body: forwardsBody ? (state.body ?? null) : null,
          },
          request.method === 'HEAD' ? neverWhole : holdsWhole,
        );
      const call = tracing ? tracing.inMessageTrace(request, reply, state.message, startCall) : startCall();
      exchange.call = call;
      let response: UpstreamAnswer;
      try {
        response = await call.answer;
      } catch (error) {
        if (exchange.clientGone || reply.sent) return reply;
        // A small answer read whole can still break off after its headers: a failed relay, as for a streamed one.
        const { respondedAt } = call;
        if (respondedAt !== undefined) {
          options.onUpstreamResult?.(request, call.statusCode, respondedAt - startedAt);
          options.sendError(request, reply, new GatewayError('upstream_unreachable', { reason: 'relay_failed', cause: error }));
          return reply;
        }
        const code = classifyUpstreamFailure(error);
        options.onUpstreamResult?.(request, code === 'upstream_timeout' ? 'timeout' : 'unreachable', performance.now() - startedAt);
        options.sendError(request, reply, new GatewayError(code, { reason: 'upstream_request_failed', cause: error }));
        return reply;
      }

      exchange.upstreamAnswered = true;
      options.onUpstreamResult?.(request, response.statusCode, (call.respondedAt ?? performance.now()) - startedAt);
      if (reply.sent) {
        discard(response.body);
        return reply;
      }
      const refused = upstreamRefusal(state, response.statusCode);
      if (refused) {
        // A small refusal was read whole, so the pooled connection stays usable; a streamed one is cut.
        discard(response.body);
        options.sendError(request, reply, await refused);
        return reply;
      }
      try {
        // An event stream is counted while it is relayed (gauge, shutdown).
        const eventStream = response.body instanceof Readable && isEventStream(response.headers['content-type']);
        if (eventStream) trackEventStream(reply.raw, options.eventStreams);
        answerStarted(state, eventStream);
        await relay(request, reply, state, response, rewrite, eventStream);
      } catch (error) {
        discard(response.body);
        if (!reply.sent && !exchange.clientGone) {
          const refusal = isGatewayError(error) ? error : new GatewayError('upstream_unreachable', { reason: 'relay_failed', cause: error });
          options.sendError(request, reply, refusal);
        }
      }
      return reply;
    },
  });
}
