import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The bench's authorization-server side (a child process): a JWKS (BENCH_JWKS, counted per fetch) and an RFC 7662
 * introspection endpoint that answers every token as active for BENCH_AUDIENCE after a fixed
 * BENCH_INTROSPECTION_DELAY_MS, like a remote AS on a nearby network. Answers `{ type: 'stats' }` over IPC.
 */
const jwks = process.env.BENCH_JWKS ?? '{"keys":[]}';
const audience = process.env.BENCH_AUDIENCE ?? '';
const delayMs = Number(process.env.BENCH_INTROSPECTION_DELAY_MS ?? '5');
let base = '';
let jwksFetches = 0;
let introspections = 0;

const server = createServer((request, response) => {
  if (request.url === '/jwks') {
    jwksFetches += 1;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(jwks);
    return;
  }
  if (request.url === '/introspect' && request.method === 'POST') {
    request.resume();
    request.on('end', () => {
      introspections += 1;
      const now = Math.floor(Date.now() / 1000);
      const answer = JSON.stringify({
        active: true,
        iss: base,
        aud: [audience],
        sub: 'bench-user',
        client_id: 'bench-client',
        scope: 'mcp:tools',
        iat: now,
        exp: now + 3600,
      });
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(answer);
      }, delayMs);
    });
    return;
  }
  response.writeHead(404).end();
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.send?.({ type: 'ready', issuer: base });
});
process.on('message', (message: { type?: string }) => {
  if (message.type === 'stats') process.send?.({ type: 'stats', jwksFetches, introspections });
});
process.on('SIGTERM', () => process.exit(0));
