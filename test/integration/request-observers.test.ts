import { describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';
import { parseMetrics, sampleValue } from '../helpers/metrics.js';
import { bodyReader, openEventStream } from '../helpers/sse.js';
import { neverAnswering } from '../helpers/upstream.js';

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;

const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('calc', target)}
`);

const auditLines = () => stack.gw.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'audit');
const requests = async (labels: Record<string, string>) =>
  sampleValue(parseMetrics((await stack.gw.gateway.metrics.render()).body), 'mcp_gateway_requests_total', labels);

describe('request observers', () => {
  it('H1 a client gone before any answer: one audit line (outcome aborted, no status) and one count', async () => {
    stack.gw.logs.length = 0;
    // Never answers; the gateway aborts this exchange when its client goes away, after writing the audit line.
    const { reached, closed: upstreamClosed } = neverAnswering(stack.upstream);
    const client = new AbortController();
    const pending = fetch(`${stack.gw.url}/calc/mcp`, {
      method: 'POST',
      signal: client.signal,
      headers: {
        authorization: `Bearer ${await stack.issuer.mint({ aud: CALC, sub: 'alice' })}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add' } }),
    }).catch((error: unknown) => error);
    await reached;
    client.abort();
    await pending;
    await upstreamClosed;

    const lines = auditLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ route: 'calc', principal: `${stack.issuer.issuer}#alice`, tool: 'add', outcome: 'aborted' });
    expect(lines[0]).not.toHaveProperty('status');
    expect(await requests({ route: 'calc', method: 'POST', outcome: 'aborted' })).toBe(1);
  });

  it('H1 an answered event stream: audited once when its answer starts, not again when it closes', async () => {
    stack.gw.logs.length = 0;
    stack.upstream.respondWith((_request, response) => {
      openEventStream(response, '{"open":true}');
      response.end();
    });
    const response = await fetch(`${stack.gw.url}/calc/mcp`, {
      headers: { authorization: `Bearer ${await stack.issuer.mint({ aud: CALC })}`, accept: 'text/event-stream' },
    });
    expect((await bodyReader(response).rest()).clean).toBe(true);
    const lines = auditLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ route: 'calc', http_method: 'GET', outcome: 'ok', status: 200 });
    expect(await requests({ route: 'calc', method: 'GET', outcome: 'ok' })).toBe(1);
  });
});
