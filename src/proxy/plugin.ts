import type { PrincipalSlots } from '../decision/ports.js';
import { METHODS, type IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline, Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { grantsAll } from '../policy/scopes.js';
import type { RequestFacts } from '../decision/facts.js';
import { requestFacts } from '../request-facts.js';
import { admit, authorize } from '../decision/pipeline.js';
import { recordAnswer } from '../decision/session.js';
import { createDecisionState, NO_RESPONSE_HEADERS, type DecisionState } from '../decision/state.js';
import { GatewayError, isGatewayError } from '../decision/refusal.js';
import { settle } from '../lib/maybe-promise.js';
import { isEventStream, isJsonMediaType } from '../lib/media-type.js';
import { filterListResponse, filterReplayedListResponse, isFilteredList } from '../policy/list-visibility.js';
import type { JsonRpcMessageFacts } from '../policy/jsonrpc.js';
import { requiredScopes } from '../policy/required-scopes.js';
import type { LimitSettings } from '../config/types.js';
import { trackEventStream } from '../observability/plugin.js';
import type { SseStreams } from '../observability/sse-streams.js';
import type { RouteRuntime } from '../decision/ports.js';
import type { Runtime } from '../runtime.js';
import { upstreamRequestHeaders, upstreamResponseHeaders } from './headers.js';
import { createSseRewriter, MAX_FILTERED_MESSAGE_BYTES, readCapped, rewriteJsonBody, unfilterable, type MessageRewrite } from './list-filter.js';
import { UpstreamCall, type UpstreamAnswer } from './upstream-call.js';
import { classifyUpstreamFailure } from './upstream-errors.js';

export interface ProxyRoutesOptions {
  /** The runtime this request runs on (pinned when it arrived, so a reload does not change it midway). */
  readonly current: (request: FastifyRequest) => Runtime;
  /** The named route's upstream connection pools, of that same pinned runtime. */
  readonly dispatcherOf: (request: FastifyRequest, route: string) => Dispatcher;
  readonly maxBodyBytes: number;
  /** Sends a GatewayError the same way the error handler does. */
  readonly sendError: (request: FastifyRequest, reply: FastifyReply, error: GatewayError) => void;
  /** Standalone SSE streams open per principal, across reloads. */
  readonly streams: PrincipalSlots;
  /** Requests in flight at the upstream per principal (POST answers, streamed ones too), across reloads. */
  readonly requestsInFlight: PrincipalSlots;
  /** The event streams relayed to clients (gauge, shutdown). */
  readonly eventStreams: SseStreams;
  /** Told once per upstream exchange: its status (or how it failed) and the milliseconds to response headers. */
  readonly onUpstreamResult?: (request: FastifyRequest, result: number | 'unreachable' | 'timeout', elapsedMs: number) => void;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The decision about an MCP request (src/decision/); null on other paths. */
    decision: DecisionState | null;
    /** What the decision read of the request, built once when it arrives and read again with the body. */
    decisionFacts: RequestFacts | null;
  }
}

/** A request the decision let through: its state, the route and the caller. */
interface Admitted {
  readonly state: DecisionState;
  readonly entry: RouteRuntime;
}

function admitted(request: FastifyRequest): Admitted {
  const state = request.decision;
  if (!state?.entry || !state.auth) throw new Error('MCP request handled without an admitted caller');
  return { state, entry: state.entry };
}

/** Upstream statuses never relayed: their challenge would steer the client to the upstream's AS (RFC 9728 §7.3). */
const UPSTREAM_AUTH_FAILURES = new Set([401, 403]);

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
function outgoingHeaders(request: FastifyRequest, { state, entry }: Admitted, forwardsBody: boolean, listFiltered: boolean) {
  const headers = upstreamRequestHeaders(request.headers, state.upstreamHeaders, entry.route.upstream.forwardHeaders);
  headers['x-request-id'] = request.id;
  if (forwardsBody) headers['content-type'] ??= 'application/json';
  else delete headers['content-type'];
  // The list filter has to read the answer: ask for it uncompressed.
  if (listFiltered) delete headers['accept-encoding'];
  return headers;
}

/**
 * With `policy.hide_unauthorized`, the rewrite of the answer: entries are kept when the caller's scopes (implies
 * applied) cover the operation they stand for — the same requiredScopes/grantsAll check a tools/call of that
 * entry gets. A POST list request's response is matched by id; a GET stream (resumption replays responses) is
 * filtered by shape. `undefined` when nothing is to be filtered.
 */
function listRewrite(httpMethod: string, { state, entry }: Admitted): MessageRewrite | undefined {
  const { policy } = entry.route;
  if (!policy.hideUnauthorized) return undefined;
  const allowed = (operation: JsonRpcMessageFacts) => grantsAll(requiredScopes(policy, operation), state.scopes);
  if (httpMethod === 'GET') return (message) => filterReplayedListResponse(message, allowed);
  const method = state.message?.method;
  if (method === undefined || !isFilteredList(method)) return undefined;
  // A list method sent as a notification (no id) is filtered too: an upstream may answer it all the same.
  const id = state.message?.id;
  return (message) => filterListResponse(message, { method, id }, allowed);
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

/** A slot frees when one of the caller's streams or requests ends, at no knowable time: a modest wait. */
const SLOT_RETRY_AFTER_MS = 5_000;

/**
 * Takes one of the caller's slots before anything is forwarded, so a refusal (429) never follows a tool call the
 * upstream already ran: a standalone GET takes a stream slot (`limits.max_streams_per_principal`), given back as
 * soon as the upstream answers with something other than a stream; a POST or DELETE takes a request slot
 * (`limits.max_concurrent_requests_per_principal`), held until its answer — an SSE stream included — ends. So the
 * stream cap counts long-lived streams, not tool calls a spec client sends with `Accept: text/event-stream`.
 */
function takeSlot(request: FastifyRequest, { state }: Admitted, options: ProxyRoutesOptions, limits: LimitSettings): () => void {
  if (!state.auth) throw new Error('MCP request forwarded without an admitted caller');
  const release =
    request.method === 'GET'
      ? options.streams.acquire(state.auth, limits.maxStreamsPerPrincipal)
      : options.requestsInFlight.acquire(state.auth, limits.maxConcurrentRequestsPerPrincipal);
  if (release) return release;
  const code = request.method === 'GET' ? 'too_many_streams' : 'too_many_requests';
  throw new GatewayError(code, { reason: 'principal_slots_full', retryAfterMs: SLOT_RETRY_AFTER_MS });
}

const EXCHANGE = Symbol('upstream exchange');

/**
 * One request's exchange with the upstream. Its call is aborted when the client goes away before the answer is
 * complete, even before headers (checklist I6), or when the gateway answered by itself meanwhile (503 at the
 * shutdown deadline). It gives the caller's slot back when the response closes. One close listener, shared by all
 * exchanges.
 */
class UpstreamExchange {
  clientGone = false;
  upstreamAnswered = false;
  call: UpstreamCall | undefined;
  releaseSlot: (() => void) | undefined;

  constructor(response: ExchangeResponse, releaseSlot: () => void) {
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
  admission: Admitted,
  response: UpstreamAnswer,
  rewrite: MessageRewrite | undefined,
  eventStream: boolean,
): Promise<void> {
  // What the decision records once the upstream answered (session bindings), before the client sees the answer.
  const recorded = recordAnswer(request.method, admission.state, { status: response.statusCode, sessionIdHeader: response.headers['mcp-session-id'] });
  if (recorded !== true && !(await recorded)) {
    request.log.warn({ route: admission.entry.route.name }, 'session binding not stored; the session will be refused until the client re-initializes');
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
  // The body is kept as the exact bytes received: what the policy evaluates is what the upstream gets.
  app.removeAllContentTypeParsers();
  // The runtime limit (a reload may lower it) is checked once the body is complete; fastify's `bodyLimit`, fixed at
  // start, bounds what is buffered meanwhile.
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.maxBodyBytes }, (request, body, done) => {
    const limit = request.decision?.maxBodyBytes;
    done(limit !== undefined && body.length > limit ? new GatewayError('payload_too_large') : null, body);
  });

  // Every method Node parses reaches the MCP hooks, so none is refused before authentication (checklist K7).
  // CONNECT never becomes a request: Node hands it to the server's 'connect' event, which the gateway leaves unset.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  app.route({
    method: app.supportedMethods.filter((method) => method !== 'CONNECT'),
    url: '/*',
    exposeHeadRoute: false,
    bodyLimit: options.maxBodyBytes,
    // The decision's first stage runs before the body is read, so an unauthenticated client never makes the
    // gateway buffer one; the second stage, in the handler, reads the body it was handed. A callback hook: when
    // the decision had nothing to wait for, the request goes on without a turn of the microtask queue.
    onRequest: (request, reply, done) => {
      const runtime = options.current(request);
      const state = createDecisionState(runtime.config.limits.maxBodyBytes);
      request.decision = state;
      const facts = requestFacts(request, runtime.config.trustedProxies);
      request.decisionFacts = facts;
      settle(
        () => admit(runtime, facts, state),
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
      const { decision: state, decisionFacts: facts } = request;
      if (!state || !facts) throw new Error('MCP request state missing: the decision did not run');
      const authorizing = authorize(facts, state, Buffer.isBuffer(request.body) ? request.body : undefined);
      if (authorizing instanceof Promise) await authorizing;
      const admission = admitted(request);
      const { entry } = admission;
      const upstream = entry.route.upstream.url;
      const rewrite = listRewrite(request.method, admission);
      const forwardsBody = request.method === 'POST';
      const exchange = new UpstreamExchange(reply.raw, takeSlot(request, admission, options, options.current(request).config.limits));

      const startedAt = performance.now();
      const call = new UpstreamCall(
        options.dispatcherOf(request, entry.route.name),
        {
          origin: upstream.origin,
          path: upstreamPath(upstream, request.url),
          method: request.method,
          headers: outgoingHeaders(request, admission, forwardsBody, rewrite !== undefined),
          body: forwardsBody ? (request.body as Buffer | undefined) : null,
        },
        request.method === 'HEAD' ? neverWhole : holdsWhole,
      );
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
      if (UPSTREAM_AUTH_FAILURES.has(response.statusCode)) {
        // A small refusal was read whole, so the pooled connection stays usable; a streamed one is cut.
        discard(response.body);
        // A per-user grant the upstream refused is dropped before answering: the next request asks for consent.
        const { auth, upstreamHeaders } = admission.state;
        if (response.statusCode === 401 && auth) await entry.credentials.upstreamRejected?.(auth, upstreamHeaders);
        options.sendError(request, reply, new GatewayError('upstream_rejected', { reason: `upstream_status_${response.statusCode}` }));
        return reply;
      }
      try {
        // Stream bookkeeping: an event stream is counted while it is relayed; a GET answered otherwise frees its
        // stream slot now (a POST's request slot is held until its answer ends).
        const eventStream = response.body instanceof Readable && isEventStream(response.headers['content-type']);
        if (eventStream) trackEventStream(reply.raw, options.eventStreams);
        else if (request.method === 'GET') exchange.releaseSlot?.();
        await relay(request, reply, admission, response, rewrite, eventStream);
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
