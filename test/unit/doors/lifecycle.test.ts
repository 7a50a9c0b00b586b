import fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayError } from '../../../src/decision/index.js';
import { afterQueued } from '../../../src/observability/after-turn.js';
import { registerRequestLifecycle } from '../../../src/doors/shared/lifecycle.js';
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
