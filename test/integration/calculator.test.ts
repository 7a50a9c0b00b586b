import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCalculator, type Calculator } from '../../examples/calculator/server.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('example calculator', () => {
  let calculator: Calculator;
  const clients: Client[] = [];

  async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = new Client({ name: 'calculator-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(calculator.url));
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  async function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(calculator.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  async function openSession(): Promise<string> {
    const response = await post(INITIALIZE);
    expect(response.status).toBe(200);
    await response.body?.cancel();
    return response.headers.get('mcp-session-id') ?? '';
  }

  beforeAll(async () => {
    calculator = await startCalculator();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await calculator.close();
  });

  it('listens on loopback at /mcp by default', () => {
    expect(calculator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  describe('with the SDK client', () => {
    it('lists add and multiply with titles, descriptions and number inputs', async () => {
      const { client } = await connect();
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      expect([...byName.keys()].sort()).toEqual(['add', 'multiply']);
      expect(byName.get('add')).toMatchObject({
        title: 'Add',
        description: expect.stringContaining('sum') as unknown,
        inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      });
      expect(byName.get('multiply')).toMatchObject({
        title: 'Multiply',
        description: expect.stringContaining('product') as unknown,
        inputSchema: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] },
      });
    });

    it.each([
      ['add', { a: 2, b: 3 }, '5'],
      ['add', { a: -1.5, b: 0.25 }, '-1.25'],
      ['multiply', { x: 4, y: 2.5 }, '10'],
      ['multiply', { x: -3, y: 7 }, '-21'],
    ])('%s %j → one text item %s', async (name, args, result) => {
      const { client } = await connect();
      const answer = await client.callTool({ name, arguments: args });
      expect(answer.content).toEqual([{ type: 'text', text: result }]);
      expect(answer.isError).toBeFalsy();
    });

    it('reports invalid arguments as a tool error', async () => {
      const { client } = await connect();
      const answer = await client.callTool({ name: 'add', arguments: { a: 'two', b: 3 } });
      expect(answer.isError).toBe(true);
    });

    it('forgets a session the client terminates', async () => {
      const { client, transport } = await connect();
      await client.listTools();
      const sessionId = transport.sessionId ?? '';
      expect(sessionId).not.toBe('');
      await transport.terminateSession();
      const response = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sessionId });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: -32000 } });
    });
  });

  describe('sessions over raw HTTP', () => {
    it('creates a session for initialize without Mcp-Session-Id and exposes its id to browsers', async () => {
      const response = await post(INITIALIZE, { origin: 'https://inspector.example' });
      expect(response.status).toBe(200);
      expect(response.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
      await response.body?.cancel();
    });

    it('gives every initialize a fresh session id', async () => {
      expect(await openSession()).not.toBe(await openSession());
    });

    it('routes a request with a known session id to that session', async () => {
      const sessionId = await openSession();
      const response = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sessionId });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('multiply');
    });

    it.each([
      ['a non-initialize request without session', { jsonrpc: '2.0', id: 2, method: 'tools/list' }, {}],
      ['a request with an unknown session', { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': 'unknown' }],
      ['initialize with an unknown session', INITIALIZE, { 'mcp-session-id': 'unknown' }],
      ['a body that is not JSON', '{not json', {}],
    ])('answers %s with 400 and JSON-RPC error -32000, id null', async (_name, body, headers) => {
      const response = await post(body, headers);
      expect(response.status).toBe(400);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
        id: null,
      });
    });

    it.each([
      ['GET', {}],
      ['GET', { 'mcp-session-id': 'unknown' }],
      ['DELETE', {}],
      ['DELETE', { 'mcp-session-id': 'unknown' }],
    ])('answers %s with %j with 400 "Invalid or missing session ID"', async (method, headers) => {
      const response = await fetch(calculator.url, { method, headers: { accept: 'text/event-stream', ...headers } });
      expect(response.status).toBe(400);
      expect(await response.text()).toBe('Invalid or missing session ID');
    });

    it('forgets a session deleted over HTTP', async () => {
      const sessionId = await openSession();
      const deleted = await fetch(calculator.url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
      expect(deleted.status).toBe(200);
      const after = await fetch(calculator.url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
      expect(after.status).toBe(400);
    });

    it('answers a CORS preflight from any origin', async () => {
      const response = await fetch(calculator.url, {
        method: 'OPTIONS',
        headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST' },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-allow-headers')).toContain('Mcp-Session-Id');
    });

    it('answers 404 outside /mcp', async () => {
      const response = await fetch(new URL('/other', calculator.url));
      expect(response.status).toBe(404);
    });
  });
});

describe('example calculator as a program', () => {
  it('prints its URL when started with --port', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/calculator/server.ts', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const lines = createInterface({ input: child.stdout });
      const [line] = (await once(lines, 'line')) as [string];
      const url = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(line)?.[1] ?? '';
      expect(url).not.toBe('');
      const response = await fetch(url, { method: 'GET' });
      expect(response.status).toBe(400);
      await response.body?.cancel();
    } finally {
      if (child.exitCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
    }
  });
});
