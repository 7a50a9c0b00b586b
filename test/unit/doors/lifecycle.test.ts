import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/decision/index.js';
import { afterQueued } from '../../../src/observability/after-turn.js';
import {
  createRequestTracker,
  registerRequestLifecycle,
  type LifecycleRequest,
  type RequestTracker,
  type Responder,
} from '../../../src/doors/shared/lifecycle.js';
import { createRuntimeSwitch } from '../../../src/reload/runtime-switch.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function lifecycleApp(onAnswered: (request: FastifyRequest, runtime: string, status: number | undefined) => void) {
  const app = fastify();
  apps.push(app);
  const runtimes = createRuntimeSwitch('first', { retire: () => Promise.resolve(), retireAfterMs: 60_000 });
  const refuse = (_request: FastifyRequest, reply: FastifyReply, error: GatewayError) => void reply.code(503).send(error.code);
  const lifecycle = registerRequestLifecycle(app, runtimes, refuse, { onAnswered });
  return { app, runtimes, lifecycle };
}

describe('request lifecycle', () => {
  it('tells of each answer once, after it was handed to the socket (audit and metrics are not part of the wait)', async () => {
    const replies = new Map<FastifyRequest, FastifyReply>();
    const told: { status: number | undefined; runtime: string; answerWritten: boolean | undefined }[] = [];
    const { app } = lifecycleApp((request, runtime, status) => told.push({ status, runtime, answerWritten: replies.get(request)?.raw.writableEnded }));
    app.get('/answer', (request, reply) => {
      replies.set(request, reply);
      return reply.code(201).send('done');
    });
    const response = await app.inject({ method: 'GET', url: '/answer' });
    expect(response.statusCode).toBe(201);
    // The client has its answer before the observer ran: it runs after the turn.
    expect(told).toEqual([]);
    await afterQueued();
    expect(told).toEqual([{ status: 201, runtime: 'first', answerWritten: true }]);
  });

  it('keeps a request on the runtime it arrived with, across a swap, and lists it until its response closes', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { app, runtimes, lifecycle } = lifecycleApp(() => undefined);
    const seen: string[] = [];
    app.get('/slow', async (request, reply) => {
      await held;
      seen.push(lifecycle.runtimeOf(request));
      return reply.send('ok');
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const pending = fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/slow`);
    await expect.poll(() => lifecycle.pending.unanswered().length).toBe(1);
    runtimes.swap('second');
    release();
    expect(await (await pending).text()).toBe('ok');
    expect(seen).toEqual(['first']);
    await expect.poll(() => lifecycle.pending.unanswered().length).toBe(0);
    expect(runtimes.inFlight()).toBe(0);
  });
});

/** A bare node:http server on the framework-free tracker, as the proxy door uses it. */
async function bareServer(onRequest: (request: IncomingMessage, response: ServerResponse, tracker: RequestTracker<string>) => void) {
  const runtimes = createRuntimeSwitch('first', { retire: () => Promise.resolve(), retireAfterMs: 60_000 });
  const told: (number | undefined)[] = [];
  const tracker = createRequestTracker<string>(runtimes, { onAnswered: (_request, _runtime, status) => told.push(status) });
  const server = createServer((request, response) => onRequest(request, response, tracker));
  servers.push(server);
  tracker.watch(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, told, runtimes, tracker };
}

function lifecycleRequest(raw: IncomingMessage): LifecycleRequest {
  return { id: 'r1', method: raw.method ?? 'GET', url: raw.url ?? '/', raw, decision: null };
}

function responder(response: ServerResponse): Responder {
  return { response, sent: false, refuse: () => response.writeHead(503).end() };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('request lifecycle without a framework (the proxy door)', () => {
  it('K10 an answer before the body was read closes the connection; one after it keeps the connection', async () => {
    const { port, told, runtimes } = await bareServer((raw, response, tracker) => {
      const request = lifecycleRequest(raw);
      tracker.track(request, responder(response));
      const answer = (bodyRead: boolean) => {
        response.writeHead(401, tracker.answering(request, 401, bodyRead) ? { connection: 'close' } : {});
        response.end();
      };
      if (raw.url === '/unread') answer(false);
      else raw.resume().on('end', () => answer(true));
    });
    const send = (path: string) => fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: '{"jsonrpc":"2.0"}' });
    expect((await send('/unread')).headers.get('connection')).toBe('close');
    expect((await send('/read')).headers.get('connection')).not.toBe('close');
    await afterQueued();
    expect(told).toEqual([401, 401]);
    await expect.poll(() => runtimes.inFlight()).toBe(0);
  });

  it('refuses at once what `refuse` turns away (draining), and lists a request until its response closes', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const runtimes = createRuntimeSwitch('first', { retire: () => Promise.resolve(), retireAfterMs: 60_000 });
    let draining = false;
    const tracker = createRequestTracker<string>(runtimes, { refuse: () => (draining ? new GatewayError('draining') : undefined) });
    const server = createServer((raw, response) => {
      const request = lifecycleRequest(raw);
      const refused = tracker.track(request, responder(response));
      if (refused) response.writeHead(503).end();
      else void held.then(() => response.end(tracker.runtimeOf(request)));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const pending = fetch(url);
    await expect.poll(() => tracker.pending.unanswered().length).toBe(1);
    runtimes.swap('second');
    draining = true;
    expect((await fetch(url)).status).toBe(503);
    release();
    expect(await (await pending).text()).toBe('first');
    await expect.poll(() => tracker.pending.unanswered().length).toBe(0);
  });
});
