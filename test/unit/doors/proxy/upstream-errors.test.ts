import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent, errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { classifyUpstreamFailure } from '../../../../src/doors/proxy/upstream-errors.js';

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

/** What undici (as the gateway's upstream agent) rejects with for a request to `origin`. */
async function upstreamFailure(origin: string): Promise<unknown> {
  const agent = new Agent({ headersTimeout: 200, connect: { timeout: 2_000 } });
  try {
    await agent.request({ origin, path: '/mcp', method: 'GET' });
    throw new Error('the request was expected to fail');
  } catch (error) {
    return error;
  } finally {
    await agent.destroy();
  }
}

describe('classifyUpstreamFailure on errors from real sockets through undici', () => {
  it('I8 connection refused → upstream_unreachable', async () => {
    const closed = createServer();
    const port = await listen(closed);
    closed.close();
    await once(closed, 'close');
    const failure = await upstreamFailure(`http://127.0.0.1:${port}`);
    expect(failure).toMatchObject({ code: 'ECONNREFUSED' });
    expect(classifyUpstreamFailure(failure)).toBe('upstream_unreachable');
  });

  it('I8 upstream never sends headers → upstream_timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer(() => undefined);
    silent.on('connection', (socket) => sockets.add(socket));
    const port = await listen(silent);
    try {
      const failure = await upstreamFailure(`http://127.0.0.1:${port}`);
      expect(failure).toBeInstanceOf(errors.HeadersTimeoutError);
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
      const failure = await upstreamFailure(`http://127.0.0.1:${port}`);
      expect(failure).toMatchObject({ code: 'UND_ERR_SOCKET' });
      expect(classifyUpstreamFailure(failure)).toBe('upstream_unreachable');
    } finally {
      dropping.close();
    }
  });
});
