import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig, demoSecrets, freeDemoPorts, freePort } from '../../examples/demo/stack.js';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';
import { assembleGateway } from '../../src/gateway/assemble.js';
import { devAuthServerOptionsFromConfig, startDevAuthServer, type DevAuthServer } from '../../src/authserver/index.js';
import { createRedisStore, type RedisStore } from '../../src/cache/redis-store.js';
import type { Gateway } from '../../src/gateway/build.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { startRedis, uniquePrefix, type RedisHandle } from '../helpers/redis.js';
import { startRecordingForwarder, type RecordingForwarder } from './recording-forwarder.js';
import { connectTraced, eventsOf, type TracedClient } from './traced-client.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../helpers/redis-timeouts.js';

/**
 * The demo configuration's introspection route (opaque tokens, RFC 7662 at the development server) with the
 * cache on a real Redis: the stack is assembled here because `npm run demo` uses the in-process cache. A
 * recording hop stands at the upstream URL so the test sees exactly what the calculator receives.
 */
let redis: RedisHandle;
let store: RedisStore;
let authServer: DevAuthServer;
let calculator: Calculator;
let upstream: RecordingForwarder;
let gateway: Gateway;
let logs: () => string;
let opaque: URL;
let keyPrefix: string;
let client: TracedClient;
let results: { add: string | undefined; multiply: string | undefined };

beforeAll(async () => {
  redis = await startRedis();
  const ports = await freeDemoPorts();
  const config = await demoConfig(ports, await demoSecrets());
  const capture = captureLogs();
  logs = capture.text;
  authServer = await startDevAuthServer({
    ...devAuthServerOptionsFromConfig(config, { autoApprove: true }),
    logger: capture.logger.child({ component: 'dev-auth-server' }),
  });
  calculator = await startCalculator({ port: await freePort() });
  upstream = await startRecordingForwarder(ports.calculator, new URL(calculator.url).origin);
  keyPrefix = uniquePrefix('e2e-introspection');
  store = createRedisStore({ url: redis.url, keyPrefix, logger: capture.logger, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
  expect(await store.whenReady(5_000)).toBe(true);
  gateway = assembleGateway(config, { logger: capture.logger, cache: store });
  await gateway.app.listen({ host: config.listen.host, port: config.listen.port });
  opaque = new URL('/calc-opaque/mcp', config.publicUrl);

  // One client session through the route: add needs mcp:tools, multiply steps up to calc:write.
  client = await connectTraced(opaque, { refreshTokens: false });
  results = { add: await client.callTool('add', { a: 2, b: 3 }), multiply: await client.callTool('multiply', { x: 6, y: 7 }) };
});

afterAll(async () => {
  await client?.session.close();
  await gateway.close();
  await Promise.all([upstream.close(), calculator.close(), authServer.close()]);
  await redis.stop();
});

async function redisContents(): Promise<string> {
  const reader = new Redis(redis.url);
  try {
    const keys = await reader.keys(`${keyPrefix}*`);
    const values = await Promise.all(keys.map((key) => reader.get(key)));
    return JSON.stringify({ keys, values });
  } finally {
    reader.disconnect();
  }
}

describe('introspection route with Redis, official SDK client, real authorization server', () => {
  it('opaque tokens: 401 → discovery → DCR → PKCE + resource → token → tools/call; step-up to calc:write through a 403', () => {
    expect(results).toEqual({ add: '5', multiply: '42' });

    const steps = ['authorization', 'authorization_response', 'token'];
    expect(client.authorizationSteps()).toEqual([
      'challenge',
      'resource_metadata',
      'authorization_server_metadata',
      'registration',
      ...steps,
      'challenge',
      ...steps,
    ]);
    expect(eventsOf(client.events, 'resource_metadata')[0]?.resource).toBe(opaque.href);
    // scopes_supported joined is "mcp:tools calc:write": the challenge names the same scopes in another order.
    expect(eventsOf(client.events, 'challenge')[1]).toMatchObject({ status: 403, error: 'insufficient_scope', scope: 'calc:write mcp:tools' });
    expect(eventsOf(client.events, 'token').map((token) => [token.resource, token.scope])).toEqual([
      [opaque.href, 'mcp:tools'],
      [opaque.href, 'calc:write mcp:tools'],
    ]);
    // Opaque: the gateway could only have accepted it through introspection.
    expect(client.provider.tokens()?.access_token.split('.')).toHaveLength(1);
  });

  it('D1 the introspection results are cached in Redis under keys and values that hold no token', async () => {
    const contents = await redisContents();
    expect(JSON.parse(contents)).toMatchObject({ keys: expect.arrayContaining([expect.any(String)]) as unknown });
    const tokens = client.issuedTokens;
    expect(tokens).toHaveLength(2);
    for (const token of tokens) {
      expect(contents).not.toContain(token);
      expect(contents).not.toContain(token.slice(0, 16));
    }
  });

  it('F1 the upstream never received the client token: no Authorization header, no token anywhere in any request', () => {
    const recorded = JSON.stringify(upstream.requests);
    expect(upstream.requests.length).toBeGreaterThan(0);
    expect(upstream.requests.map((request) => request.headers.authorization)).toEqual(upstream.requests.map(() => undefined));
    for (const token of client.issuedTokens) expect(recorded).not.toContain(token);
    expect(upstream.requests.some((request) => request.body.includes('"multiply"'))).toBe(true);
  });

  it('H1 the token appears in no gateway or authorization server log line', () => {
    const text = logs();
    expect(client.issuedTokens).toHaveLength(2);
    for (const token of client.issuedTokens) expect(text).not.toContain(token);
  });
});
