import type { ServerResponse } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';

/** K12: two routes on one upstream origin keep their own upstream.timeouts. */

const PUBLIC = 'https://gw.example.test';
const held: ServerResponse[] = [];
let arrived: () => void = () => undefined;

// The patient route comes first: a pool shared per origin used to take the most permissive timeout of all.
const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('patient', target, 'timeouts: { headers: 5m }')}
    sessions: { bind: false }
${jwtRoute('impatient', target, 'timeouts: { headers: 50ms }')}
    sessions: { bind: false }
`);

beforeAll(() => {
  stack.upstream.respondWith((_request, response) => {
    held.push(response);
    arrived();
  });
});

async function call(name: string): Promise<Response> {
  const token = await stack.issuer.mint({ aud: `${PUBLIC}/${name}/mcp` });
  return fetch(`${stack.gw.url}/${name}/mcp`, {
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
