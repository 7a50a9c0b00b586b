import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTROSPECTION_SECRET, startIntrospectionServer, type TestIntrospectionServer } from '../helpers/introspection-server.js';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';

const PUBLIC = 'https://gw.example.test';

let as: TestIntrospectionServer;

beforeAll(async () => {
  as = await startIntrospectionServer();
});

afterAll(() => as.close());

const stack = setupJwtStack(
  (target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('calc', target)}
  - name: notes
    path: /notes/mcp
    upstream: { url: ${target.upstream.url} }
    authorization_servers: [${target.issuer.issuer}]
    tokens:
      introspection: { endpoint: ${as.endpoint.href}, client_id: gateway, client_secret: "\${env:INTROSPECTION_SECRET}" }
`,
  { env: { INTROSPECTION_SECRET } },
);

function post(path: string, authorization: string): Promise<Response> {
  return fetch(`${stack.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
}

/** A real token of the route with `=` put where a careless base64 encoder leaves it. */
const padded: [string, (segments: string[]) => string][] = [
  ['padding inside the header segment', ([h, p, s]) => `${h}==.${p}.${s}`],
  ['padding inside the payload segment', ([h, p, s]) => `${h}.${p}=.${s}`],
  ['padding at the end of the signature', ([h, p, s]) => `${h}.${p}.${s}=`],
  ['padding first', ([h, p, s]) => `=${h}.${p}.${s}`],
];

describe('K16 `=` padding inside a bearer token is a malformed token (401), not a malformed request (400)', () => {
  it.each(padded)('K16 JWT route, %s → 401 invalid_token with the challenge', async (_case, pad) => {
    const token = await stack.issuer.mint({ aud: `${PUBLIC}/calc/mcp` });
    const response = await post('/calc/mcp', `Bearer ${pad(token.split('.'))}`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", .*resource_metadata="/);
    // Control: the unpadded token is accepted.
    expect((await post('/calc/mcp', `Bearer ${token}`)).status).toBe(200);
  });

  it.each([['abc=def'], ['=abc'], ['token=abc'], ['abc=.def.ghi']])(
    'K16 introspection route, %j → 401 invalid_token, never sent to the AS',
    async (token) => {
      const response = await post('/notes/mcp', `Bearer ${token}`);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", /);
      expect(as.calls).toHaveLength(0);
    },
  );

  it.each([['Bearer abc =='], ['Bearer abc,def='], ['Bearer "abc="']])('K16 control: %j is still a malformed request → 400', async (authorization) => {
    expect((await post('/calc/mcp', authorization)).status).toBe(400);
  });
});
