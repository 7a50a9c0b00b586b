import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import replyFrom from '@fastify/reply-from';
import fastify from 'fastify';
import { Pool } from 'undici';

/**
 * Reference proxies without auth (a child process), the floor the gateway's proxy layer is compared with:
 * - `undici`: node:http server relaying through one undici Pool (request body and response streamed)
 * - `reply-from`: fastify + @fastify/reply-from with a buffered body, the gateway's proxy stack without its hooks
 * Usage: reference-proxy.ts <undici|reply-from> <upstream url>
 */
const [kind, upstreamUrl] = process.argv.slice(2);
if ((kind !== 'undici' && kind !== 'reply-from') || upstreamUrl === undefined) {
  throw new Error('usage: reference-proxy.ts <undici|reply-from> <upstream url>');
}
const upstream = new URL(upstreamUrl);
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'te', 'upgrade', 'proxy-connection', 'trailer']);

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  return kept;
}

async function listen(): Promise<number> {
  if (kind === 'undici') {
    const pool = new Pool(upstream.origin, { keepAliveTimeout: 60_000 });
    const server = createServer((request, response) => {
      pool
        .request({
          method: request.method as 'GET' | 'POST',
          path: upstream.pathname,
          headers: forwardable(request.headers),
          body: request.method === 'POST' ? request : null,
        })
        .then((answer) => {
          response.writeHead(answer.statusCode, forwardable(answer.headers));
          answer.body.pipe(response);
        })
        .catch(() => {
          response.statusCode = 502;
          response.end();
        });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }
  const app = fastify({ logger: false });
  await app.register(replyFrom, { base: upstream.origin, undici: { keepAliveTimeout: 60_000 } });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.all('/*', (request, reply) => reply.from(upstream.pathname, { body: request.method === 'POST' ? request.body : null }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

const port = await listen();
process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}${upstream.pathname}` });
process.on('SIGTERM', () => process.exit(0));
