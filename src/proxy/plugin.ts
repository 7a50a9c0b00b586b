import replyFrom from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { authenticateHook, authorizeHook, mcpState } from '../auth/plugin.js';
import { GatewayError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { upstreamRequestHeaders, upstreamResponseHeaders } from './headers.js';
import { classifyUpstreamFailure } from './upstream-errors.js';

export interface ProxyRoutesOptions {
  readonly current: () => Runtime;
  readonly dispatcher: Dispatcher;
  readonly maxBodyBytes: number;
  /** Sends a GatewayError the same way the error handler does (used where reply-from owns the reply). */
  readonly sendError: (request: FastifyRequest, reply: FastifyReply, error: GatewayError) => void;
}

/** Upstream statuses never relayed: their challenge would steer the client to the upstream's AS (RFC 9728 §7.3). */
const UPSTREAM_AUTH_FAILURES = new Set([401, 403]);

function isEventStream(headers: Readonly<Record<string, unknown>>): boolean {
  const type = headers['content-type'];
  return typeof type === 'string' && type.toLowerCase().startsWith('text/event-stream');
}

/**
 * The MCP endpoints: every path not claimed by metadata or health routes lands here; the route table (not
 * fastify's router) decides which paths exist, so a config reload can add and remove routes.
 */
export async function registerProxyRoutes(app: FastifyInstance, options: ProxyRoutesOptions): Promise<void> {
  await app.register(replyFrom, { undici: options.dispatcher, disableRequestLogging: true });

  // The body is kept as the exact bytes received: what the policy evaluates is what the upstream gets.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.maxBodyBytes }, (_request, body, done) => {
    done(null, body);
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
      return reply.from(upstream.href, {
        body: request.method === 'POST' ? request.body : null,
        ...(request.method === 'POST' && { contentType: request.headers['content-type'] ?? 'application/json' }),
        rewriteRequestHeaders: (_request, headers) => upstreamRequestHeaders(headers, state.upstreamCredential),
        rewriteHeaders: (headers) => upstreamResponseHeaders(headers),
        onResponse: (_request, _reply, response) => {
          if (UPSTREAM_AUTH_FAILURES.has(response.statusCode)) {
            response.stream.resume();
            for (const name of Object.keys(reply.getHeaders())) {
              if (!name.startsWith('access-control-')) reply.removeHeader(name);
            }
            options.sendError(request, reply, new GatewayError('upstream_rejected', { reason: `upstream_status_${response.statusCode}` }));
            return;
          }
          void reply.send(response.stream);
          // Push SSE response headers out now: a quiet stream must not look like a hung request.
          if (isEventStream(reply.getHeaders())) reply.raw.flushHeaders();
        },
        onError: (_reply, { error }) => {
          const code = classifyUpstreamFailure(error);
          options.sendError(request, reply, new GatewayError(code, { reason: 'upstream_request_failed', cause: error }));
        },
      });
    },
  });
}
