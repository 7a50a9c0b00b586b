import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import replyFrom from '@fastify/reply-from';
import fastify from 'fastify';
import { errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { classifyUpstreamFailure } from '../../../src/proxy/upstream-errors.js';

type ErrorClass = new (...args: unknown[]) => Error;
// reply-from's own error classes (lib/errors.js ships no types), so the table uses exactly what it throws.
const replyFromErrors = createRequire(import.meta.url)('@fastify/reply-from/lib/errors.js') as Record<string, ErrorClass>;
const replyFromError = (name: string, cause?: unknown): Error => {
  const ErrorType = replyFromErrors[name];
  if (!ErrorType) throw new Error(`reply-from has no ${name}`);
  return name === 'InternalServerError' ? new ErrorType('boom', { cause }) : new ErrorType({ cause });
};
const withCode = (code: string, cause?: unknown): Error => Object.assign(new Error(code, { cause }), { code });

describe('classifyUpstreamFailure', () => {
  it.each<[string, unknown, 'upstream_unreachable' | 'upstream_timeout']>([
    ['I8 undici headers timeout', new errors.HeadersTimeoutError(), 'upstream_timeout'],
    ['I8 undici body timeout', new errors.BodyTimeoutError(), 'upstream_timeout'],
    ['undici connect timeout is unreachable, not slow', new errors.ConnectTimeoutError(), 'upstream_unreachable'],
    ['undici socket error', new errors.SocketError('other side closed'), 'upstream_unreachable'],
    ['undici client closed', new errors.ClientClosedError(), 'upstream_unreachable'],
    ['I8 ECONNREFUSED', withCode('ECONNREFUSED'), 'upstream_unreachable'],
    ['ECONNRESET', withCode('ECONNRESET'), 'upstream_unreachable'],
    ['ENOTFOUND', withCode('ENOTFOUND'), 'upstream_unreachable'],
    ['EAI_AGAIN', withCode('EAI_AGAIN'), 'upstream_unreachable'],
    ['EHOSTUNREACH', withCode('EHOSTUNREACH'), 'upstream_unreachable'],
    ['TCP connect ETIMEDOUT', withCode('ETIMEDOUT'), 'upstream_unreachable'],
    ['AbortSignal.timeout()', new DOMException('The operation was aborted due to timeout', 'TimeoutError'), 'upstream_timeout'],
    ['reply-from GatewayTimeoutError', replyFromError('GatewayTimeoutError', new errors.HeadersTimeoutError()), 'upstream_timeout'],
    ['reply-from TimeoutError', replyFromError('TimeoutError'), 'upstream_timeout'],
    ['reply-from HttpRequestTimeoutError', replyFromError('HttpRequestTimeoutError'), 'upstream_timeout'],
    ['reply-from Http2RequestTimeoutError', replyFromError('Http2RequestTimeoutError'), 'upstream_timeout'],
    ['reply-from Http2SessionTimeoutError', replyFromError('Http2SessionTimeoutError'), 'upstream_timeout'],
    ['reply-from ServiceUnavailableError', replyFromError('ServiceUnavailableError', withCode('ENOTFOUND')), 'upstream_unreachable'],
    ['reply-from ConnectTimeoutError (504 there, 502 here)', replyFromError('ConnectTimeoutError'), 'upstream_unreachable'],
    ['reply-from ConnectionResetError', replyFromError('ConnectionResetError'), 'upstream_unreachable'],
    ['reply-from UndiciSocketError', replyFromError('UndiciSocketError'), 'upstream_unreachable'],
    ['reply-from BadGatewayError', replyFromError('BadGatewayError'), 'upstream_unreachable'],
    ['reply-from InternalServerError wrapping a body timeout', replyFromError('InternalServerError', new errors.BodyTimeoutError()), 'upstream_timeout'],
    ['reply-from InternalServerError wrapping ECONNREFUSED', replyFromError('InternalServerError', withCode('ECONNREFUSED')), 'upstream_unreachable'],
    ['unknown wrapper around a headers timeout', withCode('SOMETHING_ELSE', withCode('WRAP', new errors.HeadersTimeoutError())), 'upstream_timeout'],
    ['unknown error', new Error('weird'), 'upstream_unreachable'],
    ['numeric code', Object.assign(new Error('x'), { code: 23 }), 'upstream_unreachable'],
    ['string thrown', 'UND_ERR_HEADERS_TIMEOUT', 'upstream_unreachable'],
    ['undefined', undefined, 'upstream_unreachable'],
    ['null', null, 'upstream_unreachable'],
  ])('%s → %s', (_name, error, expected) => {
    expect(classifyUpstreamFailure(error)).toBe(expected);
  });

  it('a cyclic cause chain terminates', () => {
    const error = new Error('a') as Error & { cause?: unknown };
    error.cause = error;
    expect(classifyUpstreamFailure(error)).toBe('upstream_unreachable');
  });
});

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** What reply-from hands to `onError` for a request to `base`. */
async function replyFromFailure(base: string): Promise<unknown> {
  let failure: unknown;
  const app = fastify();
  await app.register(replyFrom, { base, undici: { headersTimeout: 200, connectTimeout: 2_000 }, disableRequestLogging: true });
  app.get('/mcp', (_request, reply) =>
    reply.from('/mcp', {
      onError: (errorReply, { error }) => {
        failure = error;
        void errorReply.code(500).send();
      },
    }),
  );
  try {
    await app.inject({ method: 'GET', url: '/mcp' });
  } finally {
    await app.close();
  }
  return failure;
}

describe('classifyUpstreamFailure on errors from real sockets through @fastify/reply-from', () => {
  it('I8 connection refused → upstream_unreachable', async () => {
    const closed = createServer();
    const port = await listen(closed);
    closed.close();
    await once(closed, 'close');
    const failure = await replyFromFailure(`http://127.0.0.1:${port}`);
    // reply-from has no wrapper for it: a generic 500 error carrying the socket error as cause.
    expect(failure).toMatchObject({ code: 'FST_REPLY_FROM_INTERNAL_SERVER_ERROR', cause: { code: 'ECONNREFUSED' } });
    expect(classifyUpstreamFailure(failure)).toBe('upstream_unreachable');
  });

  it('I8 upstream never sends headers → upstream_timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer(() => undefined);
    silent.on('connection', (socket) => sockets.add(socket));
    const port = await listen(silent);
    try {
      const failure = await replyFromFailure(`http://127.0.0.1:${port}`);
      expect((failure as { code?: string }).code).toBe('FST_REPLY_FROM_GATEWAY_TIMEOUT');
      expect(classifyUpstreamFailure(failure)).toBe('upstream_timeout');
    } finally {
      sockets.forEach((socket) => socket.destroy());
      silent.close();
    }
  });

  it('upstream drops the connection before answering → upstream_unreachable', async () => {
    const dropping = createServer((request) => request.socket.destroy());
    const port = await listen(dropping);
    try {
      const failure = await replyFromFailure(`http://127.0.0.1:${port}`);
      expect(failure).toMatchObject({ code: 'UND_ERR_SOCKET' });
      expect(classifyUpstreamFailure(failure)).toBe('upstream_unreachable');
    } finally {
      dropping.close();
    }
  });
});
