import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileOrThrow, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { jwtRoute } from '../helpers/jwt-stack.js';
import { listenAdmin } from '../helpers/metrics.js';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

const PUBLIC = 'https://gw.example.test';

let issuer: TestIssuer;
let otherIssuer: TestIssuer;
let upstream: TestUpstream;
let gw: RunningGateway;
let admin: string;

function route(name: string, from: TestIssuer = issuer): string {
  return `\n${jwtRoute(name, { issuer: from, upstream })}\n`;
}

const configYaml = (...routes: string[]): string => `public_url: ${PUBLIC}\nroutes:${routes.join('')}`;

async function status(name: string, from: TestIssuer = issuer): Promise<number> {
  const token = await from.mint({ aud: `${PUBLIC}/${name}/mcp` });
  const response = await fetch(`${gw.url}/${name}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  return response.status;
}

const readyz = async (): Promise<number> => (await fetch(`${admin}/readyz`)).status;

beforeEach(async () => {
  [issuer, otherIssuer, upstream] = await Promise.all([startTestIssuer(), startTestIssuer(), startTestUpstream()]);
  gw = await startGateway(configYaml(route('calc')));
  await gw.gateway.warm();
  admin = await listenAdmin(gw.gateway);
  expect(await readyz()).toBe(200);
  expect(await status('calc')).toBe(200);
});

afterEach(async () => {
  await gw.close();
  await Promise.all([issuer.close(), otherIssuer.close(), upstream.close()]);
});

describe('K8 a reload never throws away working keys', () => {
  it('K8 SIGHUP (same config) and a ConfigMap change (a route added) while the JWKS fails: known keys keep validating, /readyz stays ready', async () => {
    issuer.setJwksDown(true);
    const fetchesBefore = issuer.hits.get('/jwks');

    await gw.gateway.reload(compileOrThrow(configYaml(route('calc'))));
    expect(await readyz()).toBe(200);
    expect(await status('calc')).toBe(200);

    await gw.gateway.reload(compileOrThrow(configYaml(route('calc'), route('notes'))));
    expect(await readyz()).toBe(200);
    expect(await status('calc')).toBe(200);
    // A new route on the same issuer starts with its keys too.
    expect(await status('notes')).toBe(200);
    // Nothing was needed from the failing endpoint.
    expect(issuer.hits.get('/jwks')).toBe(fetchesBefore);
  });

  it('K8 a reload that changes the issuer fails closed until the new issuer\'s keys load', async () => {
    otherIssuer.setJwksDown(true);
    await gw.gateway.reload(compileOrThrow(configYaml(route('calc', otherIssuer))));
    expect(await status('calc', otherIssuer)).toBe(503);
    expect(await status('calc')).toBe(401);
    expect(await readyz()).toBe(503);

    otherIssuer.setJwksDown(false);
    await gw.gateway.warm();
    expect(await readyz()).toBe(200);
    expect(await status('calc', otherIssuer)).toBe(200);
  });
});
