import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

/** K12: two routes on one upstream origin keep their own upstream.timeouts. */

const PUBLIC = 'https://gw.example.test';
let issuer: TestIssuer;
let upstream: TestUpstream;
let gw: RunningGateway;
const held: ServerResponse[] = [];
let arrived: () => void = () => undefined;

beforeAll(async () => {
  issuer = await startTestIssuer();
  upstream = await startTestUpstream();
  upstream.respondWith((_request, response) => {
    held.push(response);
    arrived();
  });
  const route = (name: string, headers: string) => `
  - name: ${name}
    path: /${name}/mcp
    upstream: { url: ${upstream.url}, timeouts: { headers: ${headers} } }
    authorization_servers: [${issuer.issuer}]
    tokens: { jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] } }
    sessions: { bind: false }`;
  // The patient route comes first: a pool shared per origin used to take the most permissive timeout of all.
  gw = await startGateway(`
public_url: ${PUBLIC}
routes:${route('patient', '5m')}${route('impatient', '50ms')}
`);
});

afterAll(async () => {
  await gw.close();
  await Promise.all([issuer.close(), upstream.close()]);
});

async function call(name: string): Promise<Response> {
  const token = await issuer.mint({ aud: `${PUBLIC}/${name}/mcp` });
  return fetch(`${gw.url}/${name}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
}

describe('K12 per-route upstream settings', () => {
  it('K12 the impatient route times out (504) while the patient route on the same origin still waits and succeeds', async () => {
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const patient = call('patient');
    await reached;
    const impatient = await call('impatient');
    expect(impatient.status).toBe(504);
    expect(held.length).toBe(2);
    for (const response of held) response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect((await patient).status).toBe(200);
  });
});
