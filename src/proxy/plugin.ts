import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline, type Readable } from 'node:stream';
import replyFrom from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { authenticateHook, authorizeHook, mcpState, type McpRequestState } from '../auth/plugin.js';
import { missingScopes } from '../auth/scopes.js';
import { GatewayError } from '../errors.js';
import { isEventStream, isJsonMediaType } from '../media-type.js';
import { filterListResponse, filterReplayedListResponse, isFilteredList } from '../policy/list-visibility.js';
import type { JsonRpcMessageFacts } from '../policy/jsonrpc.js';
import { requiredScopes } from '../policy/required-scopes.js';
import type { Runtime } from '../runtime.js';
import { readSessionId } from '../session/session-id.js';
import { upstreamRequestHeaders, upstreamResponseHeaders } from './headers.js';
import { createSseRewriter, MAX_FILTERED_MESSAGE_BYTES, readCapped, rewriteJsonBody, type MessageRewrite } from './list-filter.js';
import { ABORT_KEY_HEADER, type UpstreamAbortSignals } from './upstream-abort.js';
import { classifyUpstreamFailure } from './upstream-errors.js';

export interface ProxyRoutesOptions {
  /** The runtime this request runs on (pinned when it arrived, so a reload does not change it midway). */
  readonly current: (request: FastifyRequest) => Runtime;
  readonly dispatcher: Dispatcher;
  /** Where the handler registers each request's abort signal for `dispatcher` to attach (checklist I6). */
  readonly abortSignals: UpstreamAbortSignals;
  readonly maxBodyBytes: number;
  /** Sends a GatewayError the same way the error handler does (used where reply-from owns the reply). */
  readonly sendError: (request: FastifyRequest, reply: FastifyReply, error: GatewayError) => void;
  /** Told once per upstream exchange: its status (or how it failed) and the milliseconds to response headers. */
  readonly onUpstreamResult?: (request: FastifyRequest, result: number | 'unreachable' | 'timeout', elapsedMs: number) => void;
}

/** Upstream statuses never relayed: their challenge would steer the client to the upstream's AS (RFC 9728 §7.3). */
const UPSTREAM_AUTH_FAILURES = new Set([401, 403]);

/** What reply-from hands onResponse (its types declare less than it passes). */
interface UpstreamResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly stream: Readable;
}

/**
 * Abandons an upstream body. undici errors a destroyed body with AbortError; without a listener that error would
 * be uncaught and take the process down.
 */
function discard(stream: Readable): void {
  stream.on('error', () => undefined);
  stream.destroy();
}

/** Drops the upstream headers reply-from already copied, before the gateway answers on its own. */
function clearUpstreamHeaders(reply: FastifyReply): void {
  for (const name of Object.keys(reply.getHeaders())) {
    if (!name.startsWith('access-control-')) reply.removeHeader(name);
  }
}

/**
 * With `policy.hide_unauthorized`, the rewrite of the answer: entries are kept when the caller's scopes (implies
 * applied) cover the operation they stand for — the same requiredScopes/missingScopes check a tools/call of that
 * entry gets. A POST list request's response is matched by id; a GET stream (resumption replays responses) is
 * filtered by shape. `undefined` when nothing is to be filtered.
 */
function listRewrite(httpMethod: string, state: McpRequestState): MessageRewrite | undefined {
  const { policy } = state.entry.route;
  if (!policy.hideUnauthorized) return undefined;
  const allowed = (operation: JsonRpcMessageFacts) => missingScopes(requiredScopes(policy, operation), state.scopes).length === 0;
  if (httpMethod === 'GET') return (message) => filterReplayedListResponse(message, allowed);
  const method = state.message?.method;
  const id = state.message?.id;
  if (method === undefined || id === undefined || !isFilteredList(method)) return undefined;
  return (message) => filterListResponse(message, { method, id }, allowed);
}

/**
 * Session bookkeeping once the upstream answered (before the client sees the answer, so its next request finds
 * the binding): a session id issued on initialize is bound to the caller; a confirmed DELETE ends the binding.
 */
async function recordSession(request: FastifyRequest, state: McpRequestState, response: UpstreamResponse): Promise<void> {
  const { entry, auth } = state;
  if (!entry.route.sessions.bind || !auth || response.statusCode < 200 || response.statusCode >= 300) return;
  if (request.method === 'DELETE' && state.sessionId !== undefined) {
    await entry.sessions.release(state.sessionId);
    return;
  }
  if (request.method !== 'POST' || state.sessionId !== undefined || state.message?.method !== 'initialize') return;
  const issued = readSessionId(response.headers['mcp-session-id']);
  if (issued.kind !== 'valid') return;
  if (!(await entry.sessions.bind(issued.id, auth))) {
    request.log.warn({ route: entry.route.name }, 'session binding not stored; the session will be refused until the client re-initializes');
  }
}

/**
 * The MCP endpoints: every path not claimed by metadata or health routes lands here; the route table (not
 * fastify's router) decides which paths exist, so a config reload can add and remove routes.
 */
export async function registerProxyRoutes(app: FastifyInstance, options: ProxyRoutesOptions): Promise<void> {
  let abortSequence = 0;
  await app.register(replyFrom, { undici: options.dispatcher, disableRequestLogging: true });

  // The body is kept as the exact bytes received: what the policy evaluates is what the upstream gets.
  app.removeAllContentTypeParsers();
  // The runtime limit (a reload may lower it) is checked once the body is complete; fastify's `bodyLimit`, fixed at
  // start, bounds what is buffered meanwhile.
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.maxBodyBytes }, (request, body, done) => {
    const limit = request.mcp?.maxBodyBytes;
    done(limit !== undefined && body.length > limit ? new GatewayError('payload_too_large') : null, body);
  });

  app.route({
    method: ['GET', 'POST', 'DELETE', 'OPTIONS', 'PUT', 'PATCH', 'HEAD'],
    url: '/*',
    exposeHeadRoute: false,
    bodyLimit: options.maxBodyBytes,
    onRequest: authenticateHook(options.current),
    preHandler: authorizeHook(),
    handler: (request, reply) => {
      const state = mcpState(request);
      const upstream = state.entry.route.upstream.url;
      const rewrite = listRewrite(request.method, state);

      const refuse = (error: GatewayError): void => {
        clearUpstreamHeaders(reply);
        options.sendError(request, reply, error);
      };
      const unfilterable = (response: UpstreamResponse): void => {
        discard(response.stream);
        refuse(new GatewayError('upstream_unreachable', { reason: 'list_response_unfilterable' }));
      };

      /** Sends the upstream's answer, rewriting the one list result when hiding entries (fails closed). */
      const relay = async (response: UpstreamResponse): Promise<void> => {
        await recordSession(request, state, response);
        if (rewrite && response.statusCode === 200) {
          const contentType = reply.getHeader('content-type');
          const encoding = response.headers['content-encoding'];
          if (encoding !== undefined && encoding !== 'identity') return unfilterable(response);
          if (isEventStream(contentType)) {
            reply.removeHeader('content-length');
            void reply.send(pipeline(response.stream, createSseRewriter(rewrite), () => undefined));
            if (request.method === 'GET') reply.raw.flushHeaders();
            return undefined;
          }
          const body = isJsonMediaType(contentType) ? await readCapped(response.stream, MAX_FILTERED_MESSAGE_BYTES) : undefined;
          const rewritten = body && rewriteJsonBody(body, rewrite);
          if (!rewritten) return unfilterable(response);
          void reply.header('content-length', String(rewritten.length)).send(rewritten);
          return undefined;
        }
        void reply.send(response.stream);
        // A standalone GET stream may stay quiet for long: push its headers now so it does not look hung. A POST's
        // SSE answer brings its first event right behind the headers; a separate write would cost a wake-up.
        if (request.method === 'GET' && isEventStream(reply.getHeader('content-type'))) reply.raw.flushHeaders();
        return undefined;
      };

      // A client that goes away before the answer is complete aborts the upstream request, even before headers.
      const abortKey = String((abortSequence += 1));
      const upstreamAbort = new AbortController();
      options.abortSignals.register(abortKey, upstreamAbort.signal);
      reply.raw.once('close', () => {
        options.abortSignals.release(abortKey);
        if (!reply.raw.writableFinished) upstreamAbort.abort();
      });

      const startedAt = performance.now();
      return reply.from(upstream.href, {
        body: request.method === 'POST' ? request.body : null,
        ...(request.method === 'POST' && { contentType: request.headers['content-type'] ?? 'application/json' }),
        rewriteRequestHeaders: (_request, headers) => {
          const outgoing = upstreamRequestHeaders(headers, state.upstreamCredential);
          // The list filter has to read the answer: ask for it uncompressed.
          if (rewrite) delete outgoing['accept-encoding'];
          outgoing[ABORT_KEY_HEADER] = abortKey;
          return outgoing;
        },
        rewriteHeaders: (headers) => upstreamResponseHeaders(headers),
        onResponse: (_request, _reply, response) => {
          options.onUpstreamResult?.(request, response.statusCode, performance.now() - startedAt);
          if (UPSTREAM_AUTH_FAILURES.has(response.statusCode)) {
            response.stream.resume();
            refuse(new GatewayError('upstream_rejected', { reason: `upstream_status_${response.statusCode}` }));
            return;
          }
          relay(response as unknown as UpstreamResponse).catch((error: unknown) => {
            discard(response.stream);
            if (reply.sent) return;
            refuse(new GatewayError('upstream_unreachable', { reason: 'relay_failed', cause: error }));
          });
        },
        onError: (_reply, { error }) => {
          if (upstreamAbort.signal.aborted) return;
          const code = classifyUpstreamFailure(error);
          options.onUpstreamResult?.(request, code === 'upstream_timeout' ? 'timeout' : 'unreachable', performance.now() - startedAt);
          options.sendError(request, reply, new GatewayError(code, { reason: 'upstream_request_failed', cause: error }));
        },
      });
    },
  });
}
