import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore, type RedisStore } from '../../src/cache/redis-store.js';
import { jwtRoute, startJwtStack, type JwtStack } from '../helpers/jwt-stack.js';
import { listenAdmin, sampleValue, scrape } from '../helpers/metrics.js';
import { eventually } from '../helpers/poll.js';
import { spawnRedis, uniquePrefix, type SpawnedRedis } from '../helpers/redis.js';

/**
 * The series the shipped alert rules read that are not request counts: refusals by error code (both front doors)
 * and the shared cache's availability, with a real Redis killed and restarted.
 */

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;

let redis: SpawnedRedis;
let store: RedisStore;
let stack: JwtStack;
let admin: string;
let decisionUrl: string;

beforeAll(async () => {
  redis = await spawnRedis();
  store = createRedisStore({ url: redis.url, keyPrefix: uniquePrefix('operational-metrics') });
  stack = await startJwtStack(
    (target) => `
public_url: ${PUBLIC}
decision: { port: 0, proxy: traefik, unauthenticated: true }
cache: { redis_url: "${redis.url}", key_secret: "${'k'.repeat(32)}" }
routes:
${jwtRoute('calc', target)}
`,
    { cache: store },
  );
  admin = await listenAdmin(stack.gw.gateway);
  const decision = stack.gw.gateway.decision;
  if (!decision) throw new Error('decision listener not built');
  await decision.listen({ host: '127.0.0.1', port: 0 });
  decisionUrl = `http://127.0.0.1:${(decision.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await stack?.gw.gateway.admin.close();
  await stack?.gw.gateway.decision?.close();
  await stack?.close();
  await store?.close();
  await redis?.stop();
});

const metric = async (name: string, labels: Record<string, string>) => sampleValue((await scrape(admin)).samples, name, labels);

/** Scrapes until `name{labels}` equals `value`, a bounded number of times. */
const untilMetric = (name: string, labels: Record<string, string>, value: number): Promise<true> =>
  eventually(`${name} ${JSON.stringify(labels)} = ${value}`, async () => ((await metric(name, labels)) === value ? true : undefined));

describe('refusals_total', () => {
  it('counts a refusal of the proxy and one of the decision listener under their error code', async () => {
    const direct = await fetch(`${stack.gw.url}/calc/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(direct.status).toBe(401);
    const verdict = await fetch(decisionUrl, { headers: { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/calc/mcp', 'x-forwarded-host': 'gw.example.test' } });
    expect(verdict.status).toBe(401);
    expect(await metric('mcp_gateway_refusals_total', { route: 'calc', code: 'missing_token' })).toBe(2);
  });

  it('a 503 because the keys cannot be fetched is counted as auth_unavailable', async () => {
    stack.issuer.setJwksDown(true);
    try {
      const token = await stack.issuer.mint({ aud: CALC }, { header: { kid: 'rotated-key' } });
      const response = await fetch(`${stack.gw.url}/calc/mcp`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
      expect(response.status).toBe(503);
      expect(await metric('mcp_gateway_refusals_total', { route: 'calc', code: 'auth_unavailable' })).toBe(1);
    } finally {
      stack.issuer.setJwksDown(false);
    }
  });
});

describe('cache_available', () => {
  it('is 1 with Redis connected, 0 once it is killed, 1 again after it restarts', async () => {
    expect(await store.whenReady(10_000)).toBe(true);
    expect(await metric('mcp_gateway_cache_available', { backend: 'redis' })).toBe(1);
    await redis.kill();
    await untilMetric('mcp_gateway_cache_available', { backend: 'redis' }, 0);
    await redis.restart();
    await untilMetric('mcp_gateway_cache_available', { backend: 'redis' }, 1);
  });
});
