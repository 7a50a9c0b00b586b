import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import {
  active,
  deferred,
  inactive,
  INTROSPECTION_SECRET,
  startIntrospectionServer,
  type TestIntrospectionServer,
} from '../helpers/introspection-server.js';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

const PUBLIC = 'https://gw.example.test';
const RESOURCE = `${PUBLIC}/notes/mcp`;
/** Two clients on two loopback addresses (Linux routes all of 127/8 to lo), so the gateway sees two peers. */
const ATTACKER = '127.0.0.2';
const CLIENT = '127.0.0.3';
const GARBAGE = 100;
const VALID = 10;
/** Of the 64 slots of a route's bulkhead, one client may hold all but one share (16). */
const FLOOD_ALLOWANCE = 48;

/** An ingress every client reaches the gateway through: its one address, a trusted proxy naming the client. */
const INGRESS = '127.0.0.4';

let as: TestIntrospectionServer;
let upstream: TestUpstream;
let gw: RunningGateway;
let behindIngress: RunningGateway;

const gatewayYaml = (extra: string) => `
public_url: ${PUBLIC}
${extra}
routes:
  - name: notes
    path: /notes/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [https://as.example.test]
    tokens:
      introspection: { endpoint: ${as.endpoint.href}, client_id: gateway, client_secret: "\${env:INTROSPECTION_SECRET}", timeout: 20s }
`;

beforeAll(async () => {
  [as, upstream] = await Promise.all([startIntrospectionServer(), startTestUpstream()]);
  gw = await startGateway(gatewayYaml(''), { env: { INTROSPECTION_SECRET } });
  behindIngress = await startGateway(gatewayYaml(`trusted_proxies: [${INGRESS}]`), { env: { INTROSPECTION_SECRET } });
});

afterAll(async () => {
  await Promise.all([gw.close(), behindIngress.close()]);
  await Promise.all([as.close(), upstream.close()]);
});

/** Where one MCP request comes from: its own address, or the ingress's with the client in X-Forwarded-For. */
interface Sender {
  readonly gateway: RunningGateway;
  readonly localAddress: string;
  readonly forwardedFor?: string;
}

/** One MCP request on its own connection; resolves with the status. */
function post(token: string, from: Sender): Promise<number> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  return new Promise((resolve, reject) => {
    const sent = request(
      {
        host: '127.0.0.1',
        port: from.gateway.port,
        localAddress: from.localAddress,
        agent: false,
        method: 'POST',
        path: '/notes/mcp',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
          ...(from.forwardedFor === undefined ? {} : { 'x-forwarded-for': from.forwardedFor }),
        },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

const randomToken = (): string => randomBytes(32).toString('base64url');

/**
 * The AS holds every garbage answer until the valid tokens were decided (a slow AS). Without a fair share for the
 * valid tokens' client they would wait behind the flood until the bulkhead's wait ends (the introspection timeout)
 * and get 503.
 */
async function floodThenValid(attacker: Sender, client: Sender): Promise<void> {
  const valid = new Set(Array.from({ length: VALID }, randomToken));
  const garbageAnswered = deferred();
  let garbageAtAs = 0;
  let mostGarbageAtAs = 0;
  const floodPlaced = deferred();
  as.respond(async (call) => {
    if (call.token !== null && valid.has(call.token)) {
      return active({ sub: 'alice', client_id: 'app', aud: [RESOURCE], exp: Math.floor(Date.now() / 1000) + 600 });
    }
    garbageAtAs += 1;
    mostGarbageAtAs = Math.max(mostGarbageAtAs, garbageAtAs);
    // All but one share of the 64 slots: the flooding client's allowance.
    if (garbageAtAs === FLOOD_ALLOWANCE) floodPlaced.release();
    await garbageAnswered.promise;
    garbageAtAs -= 1;
    return inactive;
  });

  const flood = Array.from({ length: GARBAGE }, () => post(randomToken(), attacker));
  // The flood holds every slot it may; the rest of its requests wait for one.
  await floodPlaced.promise;

  const validStatuses = await Promise.all([...valid].map((token) => post(token, client)));
  garbageAnswered.release();
  const floodStatuses = await Promise.all(flood);

  const succeeded = validStatuses.filter((status) => status === 200).length;
  expect(succeeded).toBeGreaterThanOrEqual(9);
  // The flooding client never held more than its allowance of the AS's attention...
  expect(mostGarbageAtAs).toBe(FLOOD_ALLOWANCE);
  // ...and its requests waited for slots rather than failing: every one was answered (401: inactive).
  expect(floodStatuses.every((status) => status === 401)).toBe(true);
}

describe('K11 capacity isolation for introspection', () => {
  it(`K11 ${GARBAGE} garbage tokens from one client held by the AS → ≥ 9 of ${VALID} fresh valid tokens from another still succeed`, async () => {
    await floodThenValid({ gateway: gw, localAddress: ATTACKER }, { gateway: gw, localAddress: CLIENT });
  });

  it(`behind one trusted ingress: the fair share follows X-Forwarded-For, so ≥ 9 of ${VALID} valid tokens succeed`, async () => {
    await floodThenValid(
      { gateway: behindIngress, localAddress: INGRESS, forwardedFor: '198.51.100.66' },
      { gateway: behindIngress, localAddress: INGRESS, forwardedFor: '198.51.100.7' },
    );
  });
});
