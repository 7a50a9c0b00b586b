import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';

/** Requests declaring MCP-Protocol-Version 2026-07-28 or later carry mirrored headers the gateway holds to the body. */

const PUBLIC = 'https://gw.example.test';
const MCP = `${PUBLIC}/calc/mcp`;
const MODERN = '2026-07-28';
let token: string;

const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('calc', target)}
    sessions: { bind: false }
`);

beforeAll(async () => {
  token = await stack.issuer.mint({ aud: MCP });
});

beforeEach(() => {
  stack.upstream.requests.length = 0;
});

/** A request body; `version: null` is a 2025-era body without `_meta` protocol version. */
const body = (method: string, params: Record<string, unknown> = {}, version: string | null = MODERN) =>
  JSON.stringify({ jsonrpc: '2.0', id: 3, method, params: version === null ? params : { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': version } } });

function post(payload: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${stack.gw.url}/calc/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: payload,
  });
}

const b64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

async function expectHeaderMismatch(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32020 } });
  expect(stack.upstream.requests).toHaveLength(0);
}

describe('MCP 2026-07-28 mirrored headers at the gateway', () => {
  const v = { 'mcp-protocol-version': MODERN };

  it('a complete 2026-07-28 request is forwarded with its Mcp-* headers', async () => {
    const response = await post(body('tools/call', { name: 'add', arguments: { region: 'eu' } }), {
      ...v,
      'mcp-method': 'tools/call',
      'mcp-name': 'add',
      'mcp-param-region': 'eu',
    });
    expect(response.status).toBe(200);
    expect(stack.upstream.requests[0]?.headers).toMatchObject({ 'mcp-method': 'tools/call', 'mcp-name': 'add', 'mcp-param-region': 'eu', 'mcp-protocol-version': MODERN });
  });

  it('Mcp-Method missing on a 2026-07-28 request → 400 -32020', async () => {
    await expectHeaderMismatch(await post(body('tools/list'), v));
  });

  it.each([['tools/call', { name: 'add' }], ['resources/read', { uri: 'file:///x' }], ['prompts/get', { name: 'p' }]])(
    'Mcp-Name missing on a 2026-07-28 %s → 400 -32020',
    async (method, params) => {
      await expectHeaderMismatch(await post(body(method, params), { ...v, 'mcp-method': method }));
    },
  );

  it('Mcp-Name differing from the body → 400 -32020, decoded base64 that matches is forwarded', async () => {
    await expectHeaderMismatch(await post(body('tools/call', { name: 'add' }), { ...v, 'mcp-method': 'tools/call', 'mcp-name': 'multiply' }));
    const encoded = await post(body('resources/read', { uri: 'file:///a b/é.txt' }), { ...v, 'mcp-method': 'resources/read', 'mcp-name': b64('file:///a b/é.txt') });
    expect(encoded.status).toBe(200);
  });

  it('Mcp-Name on tasks/get (a task id) is forwarded, not refused', async () => {
    const response = await post(body('tasks/get', { taskId: 'task-42' }), { ...v, 'mcp-method': 'tasks/get', 'mcp-name': 'task-42' });
    expect(response.status).toBe(200);
    expect(stack.upstream.requests[0]?.headers['mcp-name']).toBe('task-42');
  });

  it('the body _meta protocol version must equal the header → else 400 -32020', async () => {
    await expectHeaderMismatch(await post(body('tools/list', {}, '2026-12-01'), { ...v, 'mcp-method': 'tools/list' }));
  });

  it('a downgraded header under a 2026-07-28 body → 400 -32020 (no dodging the required headers)', async () => {
    await expectHeaderMismatch(await post(body('tools/call', { name: 'add' }), { 'mcp-protocol-version': '2025-11-25' }));
  });

  it('an Mcp-Param-* value with invalid characters or a broken sentinel → 400 -32020', async () => {
    const headers = { ...v, 'mcp-method': 'tools/call', 'mcp-name': 'add' };
    await expectHeaderMismatch(await post(body('tools/call', { name: 'add' }), { ...headers, 'mcp-param-region': '=?base64?not base64?=' }));
  });

  it('Mcp-Param-tenant_id reaches the upstream; twins refused', async () => {
    const headers = { ...v, 'mcp-method': 'tools/call', 'mcp-name': 'add' };
    const payload = body('tools/call', { name: 'add', arguments: { tenant_id: 'acme' } });
    const response = await post(payload, { ...headers, 'mcp-param-tenant_id': 'acme' });
    expect(response.status).toBe(200);
    expect(stack.upstream.requests[0]?.headers['mcp-param-tenant_id']).toBe('acme');
    stack.upstream.requests.length = 0;
    await expectHeaderMismatch(await post(payload, { ...headers, 'mcp-param-tenant_id': 'acme', 'mcp-param-tenant-id': 'other' }));
  });

  it.each(['GET', 'DELETE'])('%s: Mcp-Param-* twins or invalid values → 400 -32020 as on POST (the upstream sees the headers either way)', async (method) => {
    const cases: Record<string, string>[] = [{ 'mcp-param-tenant_id': 'a', 'mcp-param-tenant-id': 'b' }, { 'mcp-param-region': '=?base64?not base64?=' }];
    for (const params of cases) {
      const response = await fetch(`${stack.gw.url}/calc/mcp`, { method, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...v, ...params } });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: -32020 } });
    }
    expect(stack.upstream.requests).toHaveLength(0);
  });

  it('requests declaring 2025-11-25 (or nothing) keep working without the mirrored headers', async () => {
    expect((await post(body('tools/call', { name: 'add' }, null), { 'mcp-protocol-version': '2025-11-25' })).status).toBe(200);
    expect((await post(body('tools/call', { name: 'add' }, null), {})).status).toBe(200);
    expect(stack.upstream.requests).toHaveLength(2);
  });
});
