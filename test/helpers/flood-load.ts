import { randomBytes } from 'node:crypto';
import type { createConsentLinks } from '../../src/grants/links.js';
import type { createGrantStore, UserGrant } from '../../src/grants/grant-store.js';
import { active, inactive, INTROSPECTION_SECRET, startIntrospectionServer } from './introspection-server.js';
import { INITIALIZE, opensSessions, PING, postMcp, startReplayedGateway, type GatewayCode } from './replayed-gateway.js';
import { startTestUpstream } from './upstream.js';

/**
 * The floods an outside attack sent at the in-process store (no Redis), replayed against a gateway on an
 * introspection route: live sessions and grants first, then garbage tokens, one caller's consent links, and links
 * of many visitors. The gateway's code is passed in, so the same floods measure this tree and another checkout
 * (bench/store-floods.ts).
 */
export interface FloodCode extends GatewayCode {
  readonly createGrantStore: typeof createGrantStore;
  readonly createConsentLinks: typeof createConsentLinks;
}

export interface FloodSizes {
  readonly liveSessions: number;
  readonly garbageTokens: number;
  /** Consent link requests of one signed-in caller without a grant. */
  readonly oneCallerLinks: number;
  /** Consent links of as many different visitors. */
  readonly visitorLinks: number;
  /** The `cache.memory` section (YAML flow mapping), when not the defaults. */
  readonly memoryBounds?: string;
}

export interface FloodFigures {
  readonly liveSessions: number;
  /** Live sessions answered 200 before and after the garbage tokens. */
  readonly sessionsBefore: number;
  readonly sessionsAfterGarbage: number;
  /** Garbage tokens answered 401. */
  readonly garbageRefused: number;
  /** Valid callers introspected again after the garbage (their cached answers were evicted). */
  readonly reintrospected: number;
  readonly grantsAfterGarbage: number;
  /** Consent link records in the store after one caller's requests. */
  readonly oneCallerLinkRecords: number;
  readonly grantsAfterVisitorLinks: number;
}

const PUBLIC = 'https://gw.example.test';
const RESOURCE = `${PUBLIC}/notes/mcp`;
const AS_ISSUER = 'https://as.example.test';
const KEY_SECRET = 'k'.repeat(32);
const CONCURRENCY = 16;
const GRANT_TTL_MS = 3_600_000;
const LINK_TTL_MS = 600_000;

/** `validToken(index)` is active for user-<index>; the AS calls every other token inactive. */
const validToken = (index: number) => `valid-${index}-${'v'.repeat(24)}`;

function grantOf(index: number): UserGrant {
  return { issuer: AS_ISSUER, subject: `user-${index}`, route: 'notes', accessToken: `vendor-token-${index}`, scopes: [], grantedAt: 1, issuedAt: 1 };
}

/** Runs `task(0..count-1)` with at most CONCURRENCY at once; resolves with every result. */
async function inWaves<T>(count: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return results;
}

const count = <T>(values: readonly T[], wanted: T) => values.filter((value) => value === wanted).length;

export async function measureFloods(code: FloodCode, sizes: FloodSizes): Promise<FloodFigures> {
  const [as, upstream] = await Promise.all([startIntrospectionServer(), startTestUpstream()]);
  as.respond(({ token }) => {
    const match = /^valid-(\d+)-/.exec(token ?? '');
    if (!match) return inactive;
    return active({ iss: AS_ISSUER, sub: `user-${match[1]}`, client_id: 'client-1', aud: RESOURCE, scope: 'mcp:tools', exp: Math.floor(Date.now() / 1000) + 3_600 });
  });
  upstream.respondWith(opensSessions);
  const { url, store, gateway } = await startReplayedGateway(
    code,
    `
public_url: ${PUBLIC}
cache: { key_secret: "${KEY_SECRET}"${sizes.memoryBounds === undefined ? '' : `, memory: ${sizes.memoryBounds}`} }
routes:
  - name: notes
    path: /notes/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${AS_ISSUER}]
    tokens:
      # max_ttl: a flood slower than the default 60 s must not count expired answers as evicted ones.
      introspection: { endpoint: ${as.endpoint.href}, client_id: gateway, client_secret: "\${env:INTROSPECTION_SECRET}", issuer: ${AS_ISSUER}, timeout: 60s, cache: { max_ttl: 1h } }
`,
    '/notes/mcp',
    { INTROSPECTION_SECRET },
  );
  try {
    const post = (bearer: string, body: string, session?: string) => postMcp(url, bearer, body, session);
    const sessions = await inWaves(sizes.liveSessions, async (index) => (await post(validToken(index), INITIALIZE)).headers.get('mcp-session-id') ?? '');
    const sessionStatuses = () => inWaves(sizes.liveSessions, async (index) => (await post(validToken(index), PING, sessions[index])).status);
    const keySecret = Buffer.from(KEY_SECRET);
    const grants = code.createGrantStore(store, keySecret);
    const saveGrants = async () => {
      for (let index = 0; index < sizes.liveSessions; index += 1) await grants.save(grantOf(index), GRANT_TTL_MS);
    };
    await saveGrants();
    const grantsAlive = async () => {
      let alive = 0;
      for (let index = 0; index < sizes.liveSessions; index += 1) if ((await grants.get(grantOf(index), 'notes')).kind === 'found') alive += 1;
      return alive;
    };

    const sessionsBefore = count(await sessionStatuses(), 200);
    const garbage = await inWaves(sizes.garbageTokens, async () => (await post(randomBytes(24).toString('base64url'), PING)).status);
    const introspectedAfterGarbage = as.calls.length;
    const sessionsAfterGarbage = count(await sessionStatuses(), 200);
    const reintrospected = as.calls.length - introspectedAfterGarbage;
    const grantsAfterGarbage = await grantsAlive();

    // Each flood starts from every grant in place, so its own figure does not depend on the one before.
    await saveGrants();
    const links = code.createConsentLinks(store, keySecret, { publicUrl: PUBLIC, ttlMs: LINK_TTL_MS });
    for (let index = 0; index < sizes.oneCallerLinks; index += 1) {
      await links.issue({ route: 'notes', issuer: AS_ISSUER, subject: 'one-caller', clientId: 'client-1' });
    }
    const oneCallerLinkRecords = (await store.scan('consent-link:', sizes.oneCallerLinks + sizes.visitorLinks))?.length ?? 0;
    for (let index = 0; index < sizes.visitorLinks; index += 1) await links.issue({ route: 'notes', issuer: AS_ISSUER, subject: `visitor-${index}` });

    return {
      liveSessions: sizes.liveSessions,
      sessionsBefore,
      sessionsAfterGarbage,
      garbageRefused: count(garbage, 401),
      reintrospected,
      grantsAfterGarbage,
      oneCallerLinkRecords,
      grantsAfterVisitorLinks: await grantsAlive(),
    };
  } finally {
    await gateway.close();
    await Promise.all([as.close(), upstream.close()]);
  }
}
