import { describe, expect, it } from 'vitest';
import { createDpopChecker } from '../../../src/auth/dpop-checker.js';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import { createRedisStore } from '../../../src/cache/redis-store.js';
import { GatewayError } from '../../../src/decision/refusal.js';
import { compileOrThrow } from '../../helpers/gateway.js';
import { createDpopKey } from '../../helpers/dpop.js';
import { freePort } from '../../helpers/net.js';

const PUBLIC = 'https://gw.example.test';
const TOKEN = 'access-token';
const NONCE_LIFETIME = 60_000;

function routeWith(dpop: string) {
  const [route] = compileOrThrow(`
public_url: ${PUBLIC}
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: "http://127.0.0.1:9/mcp" }
    authorization_servers: [https://as.example.test]
    tokens: { jwt: { issuer: https://as.example.test } }
    dpop: ${dpop}
`).routes;
  if (!route) throw new Error('no route');
  return route;
}

async function outcome(promise: Promise<void>): Promise<string> {
  try {
    await promise;
    return 'passed';
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return `${error.code}:${error.reason ?? ''}`;
  }
}

describe('createDpopChecker', () => {
  it('htu may be the canonical resource or the URI as the client addressed it (its Host), never another host', async () => {
    const key = await createDpopKey();
    const checker = createDpopChecker(routeWith('{ mode: accepted }'), { store: createMemoryStore(), keySecret: Buffer.alloc(32, 1) });
    const check = async (htu: string, host: string | undefined) =>
      outcome(checker.check({ proof: await key.proof({ htm: 'POST', htu, accessToken: TOKEN }), method: 'POST', host, url: '/calc/mcp?x=1', accessToken: TOKEN, boundKey: key.jkt }));
    expect(await check(`${PUBLIC}/calc/mcp`, 'mcp.internal:8443')).toBe('passed');
    expect(await check('https://mcp.internal:8443/calc/mcp', 'mcp.internal:8443')).toBe('passed');
    expect(await check('https://mcp.internal:8443/calc/mcp', undefined)).toBe('invalid_dpop_proof:htu');
    expect(await check('https://evil.example/calc/mcp', 'mcp.internal:8443')).toBe('invalid_dpop_proof:htu');
  });

  it('a jti is accepted once while its proof could still be accepted, in the in-process store too', async () => {
    const key = await createDpopKey();
    const checker = createDpopChecker(routeWith('{ mode: accepted }'), { store: createMemoryStore(), keySecret: Buffer.alloc(32, 1) });
    const proof = await key.proof({ htm: 'POST', htu: `${PUBLIC}/calc/mcp`, accessToken: TOKEN });
    const request = { proof, method: 'POST', host: undefined, url: '/calc/mcp', accessToken: TOKEN, boundKey: key.jkt };
    expect(await outcome(checker.check(request))).toBe('passed');
    expect(await outcome(checker.check(request))).toBe('invalid_dpop_proof:jti_replayed');
  });

  it('nonces: the current period and the one before are accepted, an older one gets use_dpop_nonce with the current', async () => {
    const key = await createDpopKey();
    let now = 10 * NONCE_LIFETIME;
    const checker = createDpopChecker(routeWith('{ mode: required, require_nonce: true, nonce_lifetime: 60s, iat_window: 5m }'), {
      store: createMemoryStore({ now: () => now }),
      keySecret: Buffer.alloc(32, 1),
      now: () => now,
    });
    const check = async (nonce: string | undefined) => {
      const proof = await key.proof({ htm: 'POST', htu: `${PUBLIC}/calc/mcp`, accessToken: TOKEN, iat: Math.floor(now / 1000), ...(nonce && { nonce }) });
      return checker.check({ proof, method: 'POST', host: undefined, url: '/calc/mcp', accessToken: TOKEN, boundKey: key.jkt });
    };
    const first = checker.currentNonce() ?? '';
    expect(first).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const missing = await check(undefined).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(GatewayError);
    expect((missing as GatewayError).refusal).toEqual({ code: 'use_dpop_nonce', nonce: first });
    expect(await outcome(check(first))).toBe('passed');

    now += NONCE_LIFETIME;
    const second = checker.currentNonce();
    expect(second).not.toBe(first);
    expect(await outcome(check(first))).toBe('passed');

    now += NONCE_LIFETIME;
    expect(await outcome(check(first))).toBe('use_dpop_nonce:nonce_stale');
    expect(await outcome(check(second))).toBe('passed');
  });

  it('no nonce is named on a route that does not require one', () => {
    const checker = createDpopChecker(routeWith('{ mode: accepted }'), { store: createMemoryStore(), keySecret: Buffer.alloc(32, 1) });
    expect(checker.currentNonce()).toBeUndefined();
  });

  it('a replay cache that cannot answer (Redis unreachable) → auth_unavailable, never a pass', async () => {
    const key = await createDpopKey();
    const store = createRedisStore({ url: `redis://127.0.0.1:${await freePort()}`, keyPrefix: 'dpop-down:', commandTimeoutMs: 1_000 });
    try {
      const checker = createDpopChecker(routeWith('{ mode: accepted }'), { store, keySecret: Buffer.alloc(32, 1) });
      const proof = await key.proof({ htm: 'POST', htu: `${PUBLIC}/calc/mcp`, accessToken: TOKEN });
      const request = { proof, method: 'POST', host: undefined, url: '/calc/mcp', accessToken: TOKEN, boundKey: key.jkt };
      expect(await outcome(checker.check(request))).toBe('auth_unavailable:dpop_replay_cache_unavailable');
    } finally {
      await store.close();
    }
  });
});
