import { connect, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { jwtRoute, setupJwtStack, type JwtRouteTarget } from '../helpers/jwt-stack.js';
import { neverAnswering, startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

/**
 * K10: a refused request's declared body is never read or waited for; a slow body times out; shutdown neither
 * waits on half-sent requests nor leaves a request unanswered at its deadline.
 */

const PUBLIC = 'https://gw.example.test';

function configYaml(target: JwtRouteTarget, extra = ''): string {
  return `
public_url: ${PUBLIC}
limits: { body_timeout: 1s, header_timeout: 1s }
${extra}
routes:
${jwtRoute('calc', target)}
    cors: { allowed_origins: ["https://app.example"] }
    rate_limit: { requests: 1, per: 1h }
    policy: { scopes: [mcp] }
`;
}

/** A raw connection that records what the gateway sends and when it closes the connection. */
interface RawExchange {
  readonly socket: Socket;
  /** Resolves with everything received once the gateway closed (or ended) the connection. */
  readonly closed: Promise<string>;
}

function openExchange(port: number, head: string): RawExchange {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => {
    socket.once('end', () => resolve(received));
    socket.once('close', () => resolve(received));
  });
  socket.write(head);
  return { socket, closed };
}

const headOf = (lines: readonly string[]) => `${lines.join('\r\n')}\r\n\r\n`;
const BIG_BODY = ['Content-Type: application/json', 'Content-Length: 100000'];

const stack = setupJwtStack((target) => configYaml(target));

describe('K10 a refused request is answered and its connection closed, its body never awaited', () => {
  const cases: [string, () => Promise<string[]>, number][] = [
    ['401 no token', () => Promise.resolve(['POST /calc/mcp HTTP/1.1', 'Host: gw']), 401],
    ['401 invalid token', () => Promise.resolve(['POST /calc/mcp HTTP/1.1', 'Host: gw', 'Authorization: Bearer x.y.z']), 401],
    ['400 token in the query', () => Promise.resolve(['POST /calc/mcp?access_token=abc HTTP/1.1', 'Host: gw']), 400],
    ['404 unknown path', () => Promise.resolve(['POST /other/mcp HTTP/1.1', 'Host: gw']), 404],
    ['403 origin not allowed', () => Promise.resolve(['POST /calc/mcp HTTP/1.1', 'Host: gw', 'Origin: https://evil.example']), 403],
    ['403 missing scope', async () => ['POST /calc/mcp HTTP/1.1', 'Host: gw', `Authorization: Bearer ${await stack.issuer.mint({ aud: `${PUBLIC}/calc/mcp`, scope: 'other', sub: 'scope-less' })}`], 403],
  ];

  it.each(cases)('K10 %s: answered with Connection: close, connection closed with the body unsent', async (_name, lines, status) => {
    const exchange = openExchange(stack.gw.port, headOf([...(await lines()), ...BIG_BODY]) + '{"jsonrpc":');
    const received = await exchange.closed;
    expect(received).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(received.toLowerCase()).toContain('connection: close');
    exchange.socket.destroy();
  });

  // Answers that are not refusals, on paths whose handlers never read a body: the same rule (the request lifecycle).
  const answered: [string, string[], number][] = [
    ['204 CORS preflight', ['OPTIONS /calc/mcp HTTP/1.1', 'Host: gw', 'Origin: https://app.example', 'Access-Control-Request-Method: POST'], 204],
    ['200 protected resource metadata', ['GET /.well-known/oauth-protected-resource/calc/mcp HTTP/1.1', 'Host: gw'], 200],
    ['200 health', ['GET /healthz HTTP/1.1', 'Host: gw'], 200],
    ['400 malformed path', ['POST /calc/%zz HTTP/1.1', 'Host: gw'], 400],
  ];

  it.each(answered)('K10 %s with a declared body: answered with Connection: close, the body never awaited', async (_name, lines, status) => {
    const exchange = openExchange(stack.gw.port, headOf([...lines, ...BIG_BODY]) + '{"jsonrpc":');
    const received = await exchange.closed;
    expect(received).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(received.toLowerCase()).toContain('connection: close');
    exchange.socket.destroy();
  });

  it('K10 429 rate limited: answered and closed without reading the body', async () => {
    const token = await stack.issuer.mint({ aud: `${PUBLIC}/calc/mcp`, scope: 'mcp', sub: 'limited' });
    const first = await fetch(`${stack.gw.url}/calc/mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect(first.status).toBe(200);
    const exchange = openExchange(stack.gw.port, headOf(['POST /calc/mcp HTTP/1.1', 'Host: gw', `Authorization: Bearer ${token}`, ...BIG_BODY]));
    const received = await exchange.closed;
    expect(received).toMatch(/^HTTP\/1\.1 429 /);
    expect(received.toLowerCase()).toContain('connection: close');
  });

  it('control: a refusal of a request without a body keeps the connection open (keep-alive)', async () => {
    const exchange = openExchange(stack.gw.port, headOf(['GET /calc/mcp HTTP/1.1', 'Host: gw']));
    const status = await new Promise<string>((resolve) => exchange.socket.once('data', (chunk: string | Buffer) => resolve(String(chunk))));
    expect(status).toMatch(/^HTTP\/1\.1 401 /);
    expect(status.toLowerCase()).toContain('connection: keep-alive');
    exchange.socket.destroy();
  });
});

describe('K10 limits.body_timeout and limits.header_timeout', () => {
  it('K10 an authenticated request whose body stalls gets 408 and its connection closed', async () => {
    const token = await stack.issuer.mint({ aud: `${PUBLIC}/calc/mcp`, scope: 'mcp', sub: 'slow-body' });
    const before = stack.upstream.requests.length;
    const exchange = openExchange(stack.gw.port, headOf(['POST /calc/mcp HTTP/1.1', 'Host: gw', `Authorization: Bearer ${token}`, ...BIG_BODY]) + '{"jsonrpc"');
    const received = await exchange.closed;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(stack.upstream.requests.length).toBe(before);
  });

  it('K10 headers that never finish are cut at header_timeout (408, connection closed)', async () => {
    const exchange = openExchange(stack.gw.port, 'POST /calc/mcp HTTP/1.1\r\nHost: gw\r\nX-Slow: ');
    expect(await exchange.closed).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('check-config refuses header_timeout longer than body_timeout', async () => {
    await expect(startGateway(configYaml(stack).replace('limits: { body_timeout: 1s, header_timeout: 1s }', 'limits: { body_timeout: 5s, header_timeout: 10s }'))).rejects.toThrow(
      'limits.header_timeout: must not be longer than body_timeout',
    );
  });
});

describe('K10 shutdown', () => {
  async function ownGateway(grace: string): Promise<{ gateway: RunningGateway; local: TestUpstream }> {
    const local = await startTestUpstream();
    const yaml = configYaml({ issuer: stack.issuer, upstream: local }, `shutdown: { grace_period: ${grace} }`).replace('rate_limit: { requests: 1, per: 1h }', '');
    return { gateway: await startGateway(yaml), local };
  }

  it('K10 does not wait on a half-sent request: 503 + close at once, shutdown completes within its grace period of 5 minutes', async () => {
    const { gateway: own, local } = await ownGateway('5m');
    const token = await stack.issuer.mint({ aud: `${PUBLIC}/calc/mcp`, scope: 'mcp', sub: 'half-sent' });
    // Node answers `Expect: 100-continue` as it hands the request to the gateway: then it is in flight.
    const halfSent = openExchange(own.port, headOf(['POST /calc/mcp HTTP/1.1', 'Host: gw', `Authorization: Bearer ${token}`, 'Expect: 100-continue', ...BIG_BODY]));
    await new Promise<void>((resolve) => halfSent.socket.once('data', () => resolve()));
    halfSent.socket.write('{"jsonrpc"');
    await own.close();
    expect(await halfSent.closed).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 503 /);
    await local.close();
  });

  it('K10 connections without a request (nothing sent, headers half sent) on both listeners never hold shutdown (grace period 5 minutes)', async () => {
    const local = await startTestUpstream();
    const yaml = configYaml({ issuer: stack.issuer, upstream: local }, 'shutdown: { grace_period: 5m }\ndecision: { port: 0, proxy: envoy, unauthenticated: true }');
    const own = await startGateway(yaml.replace('rate_limit: { requests: 1, per: 1h }', ''));
    const decision = own.gateway.decision;
    if (!decision) throw new Error('decision listener not built');
    await decision.listen({ host: '127.0.0.1', port: 0 });
    const decisionPort = (decision.server.address() as AddressInfo).port;
    const token = await stack.issuer.mint({ aud: `${PUBLIC}/calc/mcp`, scope: 'mcp', sub: 'half-question' });
    const silent = openExchange(own.port, '');
    const halfHeaders = openExchange(own.port, 'POST /calc/mcp HTTP/1.1\r\nHost: gw\r\nAuthorization: Bea');
    const silentQuestion = openExchange(decisionPort, '');
    const halfQuestion = openExchange(decisionPort, 'POST /calc/mcp HTTP/1.1\r\nHost: gw\r\n');
    // An Envoy question whose body (with_request_body) stalls halfway: a request in flight on the decision door
    // (Node answers `Expect: 100-continue` as it hands the request over).
    const halfBody = openExchange(decisionPort, headOf(['POST /calc/mcp HTTP/1.1', 'Host: gw', `Authorization: Bearer ${token}`, 'Expect: 100-continue', ...BIG_BODY]));
    await new Promise<void>((resolve) => halfBody.socket.once('data', () => resolve()));
    halfBody.socket.write('{"jsonrpc"');
    await Promise.all([silent, halfHeaders, silentQuestion, halfQuestion].map(({ socket }) => new Promise((resolve) => (socket.connecting ? socket.once('connect', resolve) : resolve(undefined)))));
    await own.close();
    const received = await Promise.all([silent.closed, halfHeaders.closed, silentQuestion.closed, halfQuestion.closed, halfBody.closed]);
    expect(received.slice(0, 4)).toEqual(['', '', '', '']);
    expect(received[4]).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 503 /);
    await local.close();
  });

  it('K10 a request still waiting for the upstream at the grace deadline gets a 503, and the upstream request is dropped', async () => {
    const { gateway: own, local } = await ownGateway('1s');
    const token = await stack.issuer.mint({ aud: `${PUBLIC}/calc/mcp`, scope: 'mcp', sub: 'deadline' });
    const stalled = neverAnswering(local);
    const waiting = fetch(`${own.url}/calc/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    await stalled.reached;
    const closing = own.close();
    const answered = await waiting;
    expect(answered.status).toBe(503);
    expect(answered.headers.get('retry-after')).toBe('1');
    await stalled.closed;
    await closing;
    await local.close();
  });
});
