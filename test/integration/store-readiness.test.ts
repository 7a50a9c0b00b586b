import { afterEach, describe, expect, it } from 'vitest';
import { createCacheStore } from '../../src/gateway/cache-store.js';
import type { RedisStore } from '../../src/cache/redis-store.js';
import { compileOrThrow, startGateway } from '../helpers/gateway.js';
import { INTROSPECTION_SECRET } from '../helpers/introspection-server.js';
import { spawnRedis } from '../helpers/redis.js';

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A route whose verifier is ready at once (introspection), so /readyz speaks only of the store. */
function configYaml(redisPort: number): string {
  return `
public_url: https://gw.example.test
cache: { redis_url: "redis://127.0.0.1:${redisPort}", key_secret: "${'k'.repeat(32)}" }
routes:
  - name: notes
    path: /notes/mcp
    upstream: { url: "http://127.0.0.1:9/mcp" }
    authorization_servers: [https://as.example.test]
    tokens:
      introspection: { endpoint: "http://127.0.0.1:9/introspect", client_id: gateway, client_secret: "\${env:INTROSPECTION_SECRET}" }
`;
}

async function readyz(url: string): Promise<{ status: number; body: { status: string; cache: Record<string, unknown> } }> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: (await response.json()) as { status: string; cache: Record<string, unknown> } };
}

describe('/readyz and Redis', () => {
  it('a replica starting while Redis is not up yet is not ready until Redis connected; a later outage keeps it ready', async () => {
    const redis = await spawnRedis();
    cleanups.push(() => redis.stop());
    await redis.kill();
    const yaml = configYaml(redis.port);
    const env = { INTROSPECTION_SECRET };
    const store = createCacheStore(compileOrThrow(yaml, env).cache) as RedisStore;
    const gw = await startGateway(yaml, { env, cache: store });
    cleanups.push(() => gw.close());

    expect(await readyz(gw.url)).toMatchObject({ status: 503, body: { status: 'not_ready', cache: { backend: 'redis', connectedOnce: false } } });

    await redis.restart();
    expect(await store.whenReady(10_000)).toBe(true);
    expect(await readyz(gw.url)).toMatchObject({ status: 200, body: { status: 'ready', cache: { state: 'ready', connectedOnce: true } } });

    // Every replica would leave the Service at once: the outage is reported, not gated on.
    await redis.kill();
    await expect.poll(async () => (await readyz(gw.url)).body.cache.state, { interval: 20, timeout: 10_000 }).not.toBe('ready');
    expect(await readyz(gw.url)).toMatchObject({ status: 200, body: { status: 'ready', cache: { connectedOnce: true } } });
  });
});
