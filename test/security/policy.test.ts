import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '../../src/config/load.js';
import { oneRouteYaml } from '../helpers/config-yaml.js';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';
import { bodyReader, openEventStream } from '../helpers/sse.js';

/**
 * K1, K2, K5: object policies hold whatever spelling or method names the object. The upstream is the official
 * SDK's McpServer (stateless), so the "same resource" is what a real MCP server resolves, not what we assume.
 */

const PUBLIC = 'https://gw.example.test';
const SECRET_TEXT = 'the secret itself';

let sdkUpstream: { url: string; close(): Promise<void> };

/**
 * How servers that resolve a URI rather than look it up find a resource: a file server through fileURLToPath (which
 * ignores query and fragment), others by host, as DNS reads it, and path (ignoring userinfo and query).
 */
function resolvesToSecret(uri: URL): boolean {
  if (uri.protocol === 'file:') return fileURLToPath(uri) === '/secret.txt';
  return `${uri.hostname.replace(/\.$/, '')}${uri.pathname}` === 'docs.example.com/secret';
}

const REPORT_TEXT = 'the quarterly report';
/** Shared by the per-request servers, as a stateless server's task store is: a task outlives the request. */
const taskStore = new InMemoryTaskStore();

function sdkServer(): McpServer {
  const server = new McpServer(
    { name: 'files', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore },
  );
  // A protected tool run as a task (MCP 2025-11-25): its result is fetched later with tasks/result.
  server.experimental.tasks.registerToolTask('report', { execution: { taskSupport: 'required' } }, {
    createTask: async ({ taskStore: store, taskRequestedTtl }) => {
      const task = await store.createTask({ ttl: taskRequestedTtl ?? 60_000 });
      await store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: REPORT_TEXT }] });
      return { task };
    },
    getTask: ({ taskId, taskStore: store }) => store.getTask(taskId),
    getTaskResult: ({ taskId, taskStore: store }) => store.getTaskResult(taskId) as Promise<CallToolResult>,
  });
  server.registerResource('secret', 'file:///secret.txt', {}, (uri) => ({ contents: [{ uri: uri.href, text: SECRET_TEXT }] }));
  server.registerResource('public', 'file:///public.txt', {}, (uri) => ({ contents: [{ uri: uri.href, text: 'public' }] }));
  server.registerResource(
    'notes',
    new ResourceTemplate('notes://{id}', { list: undefined, complete: { id: () => ['secret-note', 'other'] } }),
    {},
    (uri) => ({ contents: [{ uri: uri.href, text: 'note' }] }),
  );
  // Registered last: every URI no resource or template above takes is resolved.
  server.registerResource('resolved', new ResourceTemplate('{+uri}', { list: undefined }), {}, (uri) => ({
    contents: [{ uri: uri.href, text: resolvesToSecret(uri) ? SECRET_TEXT : 'other' }],
  }));
  server.registerPrompt('leak', { argsSchema: { topic: completable(z.string(), () => ['internal-plans']) } }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'x' } }],
  }));
  return server;
}

async function startSdkUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const mcp = sdkServer();
      response.on('close', () => void transport.close().then(() => mcp.close()));
      void mcp.connect(transport).then(() => transport.handleRequest(request, response, JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  sdkUpstream = await startSdkUpstream();
});

afterAll(() => sdkUpstream.close());

/** The files route is served by the SDK server; the stack's own upstream records what reaches the recorded route. */
const stack = setupJwtStack((target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('files', { issuer: target.issuer, upstream: sdkUpstream })}
    sessions: { bind: false }
    policy:
      scopes: [mcp]
      resources: { "file:///secret.txt": [files:secret], "https://docs.example.com/secret": [files:secret] }
      prompts: { leak: [prompts:leak] }
      tools: { report: [reports:read] }
${jwtRoute('recorded', target)}
    sessions: { bind: false }
    policy:
      resources: { "file:///secret.txt": [files:secret] }
      hide_unauthorized: true
`);

const ROUTE_ONLY = 'mcp';
const EVERYTHING = 'mcp files:secret prompts:leak reports:read';

async function call(path: string, scope: string, body: unknown): Promise<Response> {
  const token = await stack.issuer.mint({ aud: `${PUBLIC}${path}`, scope });
  return fetch(`${stack.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const rpc = (method: string, params: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 7, method, params });
const read = (uri: string) => rpc('resources/read', { uri });

/** A read of `uri` on the route with resource policies is refused as invalid params, and nothing is forwarded. */
async function expectRefusedAsInvalidParams(uri: string): Promise<void> {
  const before = stack.upstream.requests.length;
  const response = await call('/recorded/mcp', 'files:secret', read(uri));
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602 } });
  expect(stack.upstream.requests.length).toBe(before);
}

/**
 * Spellings of file:///secret.txt and https://docs.example.com/secret that the SDK server resolves to the protected
 * resource: by its own key (`new URL(uri).toString()`), or through a resolving handler (`resolvesToSecret`).
 */
const SPELLINGS = [
  ['upper-case scheme', 'FILE:///secret.txt'],
  ['file://localhost', 'file://localhost/secret.txt'],
  ['dot segment', 'file:///./secret.txt'],
  ['double-dot segment', 'file:///x/../secret.txt'],
  ['encoded dot segment', 'file:///x/%2E%2e/secret.txt'],
  ['encoded dot inside a name', 'file:///secret%2Etxt'],
  ['surrounding whitespace', '  file:///secret.txt\n'],
  ['embedded tab and newline', 'file:///se\tcr\net.txt'],
  ['backslash', 'file:///x\\..\\secret.txt'],
  ['file: query (fileURLToPath ignores it)', 'file:///secret.txt?x=1'],
  ['file: empty query', 'file:///secret.txt?'],
  ['file: fragment', 'file:///secret.txt#top'],
  ['https canonical', 'https://docs.example.com/secret'],
  ['userinfo', 'https://reader@docs.example.com/secret'],
  ['userinfo with a password', 'https://a:b@docs.example.com/secret'],
  ['query', 'https://docs.example.com/secret?download=1'],
  ['trailing-dot host', 'https://docs.example.com./secret'],
  ['empty port', 'https://docs.example.com:/secret'],
  ['default port', 'https://docs.example.com:443/secret'],
  ['upper-case and fullwidth host (IDNA)', 'https://ＤＯＣＳ.Example.com/secret'],
] as const;

describe('K1 resource policy holds for every spelling the upstream resolves to the protected resource', () => {
  it('control: the SDK server really serves the secret under each spelling (the bypass is real without K1)', async () => {
    for (const [, uri] of SPELLINGS) {
      const response = await call('/files/mcp', EVERYTHING, read(uri));
      expect(response.status, uri).toBe(200);
      expect(await response.text(), uri).toContain(SECRET_TEXT);
    }
  });

  it.each(SPELLINGS)('K1 %s → 403 naming the resource scope', async (_name, uri) => {
    const response = await call('/files/mcp', ROUTE_ONLY, read(uri));
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toContain('scope="mcp files:secret"');
  });

  it.each(['file:///public.txt', 'https://docs.example.com/public'])('K1 another resource stays reachable with the route scope only (%s)', async (uri) => {
    const response = await call('/files/mcp', ROUTE_ONLY, read(uri));
    expect(response.status).toBe(200);
  });

  it.each([
    ['no scheme', 'secret.txt'],
    ['bad port', 'http://host:99999/x'],
    ['empty', ''],
  ])('K1 a URI that does not parse, on a route with resource policies → 400 JSON-RPC -32602 (%s)', async (_name, uri) => {
    await expectRefusedAsInvalidParams(uri);
  });

  it.each([
    ['encoded slash', 'file:///x%2F..%2Fsecret.txt'],
    ['encoded slash, lower case, https', 'https://docs.example.com/x%2f..%2fsecret'],
    ['encoded backslash', 'file:///x%5C..%5Csecret.txt'],
    ['encoded NUL', 'file:///secret.txt%00.png'],
    ['raw backslash in another scheme', 'notes://h/x\\..\\secret'],
  ])('K1 an encoded /, \\ or NUL in the path (servers decode and split it their own way) → 400 JSON-RPC -32602 (%s)', async (_name, uri) => {
    await expectRefusedAsInvalidParams(uri);
  });
});

describe('K2 every method that names a protected object is held to its policy', () => {
  it.each([
    ['resources/subscribe', rpc('resources/subscribe', { uri: 'file:///secret.txt' }), 'mcp files:secret'],
    ['resources/unsubscribe', rpc('resources/unsubscribe', { uri: 'FILE:///x/../secret.txt' }), 'mcp files:secret'],
    ['completion/complete ref/prompt', rpc('completion/complete', { ref: { type: 'ref/prompt', name: 'leak' }, argument: { name: 'topic', value: '' } }), 'mcp prompts:leak'],
    ['completion/complete ref/resource', rpc('completion/complete', { ref: { type: 'ref/resource', uri: 'FILE:///secret.txt' }, argument: { name: 'x', value: '' } }), 'mcp files:secret'],
    ['completion/complete with an unreadable ref → prompt and resource scopes', rpc('completion/complete', { ref: { type: 'ref/other' }, argument: { name: 'x', value: '' } }), 'mcp prompts:leak files:secret'],
  ])('K2 %s → 403 naming every needed scope', async (_name, body, scopes) => {
    const response = await call('/files/mcp', ROUTE_ONLY, body);
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toContain(`scope="${scopes}"`);
  });

  it('K2 a URI template as a resource key (it would not hold reads of notes://secret-note) is refused by check-config, naming its path', () => {
    const result = parseConfig(`${oneRouteYaml('/mcp')}    policy:\n      resources: { "notes://{id}": [notes:read] }\n`);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((problem) => problem.path)).toEqual(['routes.0.policy.resources.notes://{id}']);
  });

  it('control: with the scopes, the completion reaches the SDK server and completes the prompt argument', async () => {
    const response = await call(
      '/files/mcp',
      EVERYTHING,
      rpc('completion/complete', { ref: { type: 'ref/prompt', name: 'leak' }, argument: { name: 'topic', value: '' } }),
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('internal-plans');
  });
});

describe('K2 tasks (MCP 2025-11-25) cannot fetch, list or cancel what the caller could not have run', () => {
  /** Runs the protected tool as a task with its scope; the task id. */
  async function startReportTask(): Promise<string> {
    const response = await call('/files/mcp', 'mcp reports:read', rpc('tools/call', { name: 'report', arguments: {}, task: { ttl: 60_000 } }));
    expect(response.status).toBe(200);
    return ((await response.json()) as { result: { task: { taskId: string } } }).result.task.taskId;
  }

  it('control: with every scope, tasks/result returns the tool result (the bypass is real without K2)', async () => {
    const taskId = await startReportTask();
    const response = await call('/files/mcp', EVERYTHING, rpc('tasks/result', { taskId }));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain(REPORT_TEXT);
  });

  it.each([
    ['tasks/result', (taskId: string) => ({ taskId })],
    ['tasks/get', (taskId: string) => ({ taskId })],
    ['tasks/cancel', (taskId: string) => ({ taskId })],
    ['tasks/list', () => ({})],
  ])('K2 %s with the route scope only → 403 naming every scope an operation on the route can need', async (method, params) => {
    const taskId = await startReportTask();
    const response = await call('/files/mcp', ROUTE_ONLY, rpc(method, params(taskId)));
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toContain('scope="mcp reports:read prompts:leak files:secret"');
    expect(await response.text()).not.toContain(REPORT_TEXT);
  });

  it('K2 a token holding the tool scope but not the others still cannot fetch (the task could be any operation)', async () => {
    const taskId = await startReportTask();
    const response = await call('/files/mcp', 'mcp reports:read', rpc('tasks/get', { taskId }));
    expect(response.status).toBe(403);
  });
});

describe('K5 a message whose JSON-RPC shape policy cannot trust is refused before the upstream', () => {
  it.each([
    ['object id', '{"jsonrpc":"2.0","id":{},"method":"resources/list"}'],
    ['array id', '{"jsonrpc":"2.0","id":[1],"method":"resources/list"}'],
    ['boolean id', '{"jsonrpc":"2.0","id":true,"method":"resources/list"}'],
    ['null id on a request', '{"jsonrpc":"2.0","id":null,"method":"resources/list"}'],
    ['id 1e400 (Infinity; echoed by JSON.stringify as null)', '{"jsonrpc":"2.0","id":1e400,"method":"resources/list"}'],
    ['id -1e400 (-Infinity)', '{"jsonrpc":"2.0","id":-1e400,"method":"resources/list"}'],
    ['id 1e309 (overflows through its exponent)', '{"jsonrpc":"2.0","id":1e309,"method":"resources/list"}'],
    ['fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"resources/list"}'],
    ['id beyond 2^53 (an upstream with 64-bit integers echoes another number)', '{"jsonrpc":"2.0","id":9007199254740993,"method":"resources/list"}'],
    ['non-string method', '{"jsonrpc":"2.0","id":1,"method":["resources/read"],"params":{"uri":"file:///secret.txt"}}'],
    ['scalar params', '{"jsonrpc":"2.0","id":1,"method":"resources/list","params":"x"}'],
    ['no jsonrpc member', '{"id":1,"method":"resources/list"}'],
    ['jsonrpc 1.0', '{"jsonrpc":"1.0","id":1,"method":"resources/list"}'],
    ['response with result and error', '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}'],
    ['neither request nor response', '{"jsonrpc":"2.0","id":1}'],
  ])('K5 %s → 400 JSON-RPC -32600, nothing forwarded', async (_name, body) => {
    const before = stack.upstream.requests.length;
    const response = await call('/recorded/mcp', 'files:secret', body);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(stack.upstream.requests.length).toBe(before);
  });

  /** A resources/list result holding the secret, answering request `id`. */
  const secretList = (id: unknown) =>
    JSON.stringify({ jsonrpc: '2.0', id, result: { resources: [{ uri: 'file:///secret.txt', name: 'secret-entry' }, { uri: 'file:///ok', name: 'o' }] } });
  const LIST = '{"jsonrpc":"2.0","id":5,"method":"resources/list"}';

  it.each([
    ['id null (what JSON.stringify makes of an id it cannot write)', secretList(null)],
    ['another id', secretList(6)],
    ['the id as a string', secretList('5')],
    ['no id', JSON.stringify({ jsonrpc: '2.0', result: { resources: [{ uri: 'file:///secret.txt', name: 'secret-entry' }] } })],
    ['a method beside the result', JSON.stringify({ ...(JSON.parse(secretList(5)) as object), method: 'notifications/message' })],
    ['a batch holding the result', `[${secretList(5)}]`],
  ])('K5 a JSON answer to a filtered list that does not match the request (%s) → 502, never relayed unfiltered', async (_name, answer) => {
    stack.upstream.respondWith((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(answer);
    });
    const response = await call('/recorded/mcp', ROUTE_ONLY, LIST);
    expect(response.status).toBe(502);
    expect(await response.text()).not.toContain('secret-entry');
  });

  describe('K5 a list method sent as a notification (no id), which a lenient upstream may answer anyway', () => {
    const LIST_NOTIFICATION = '{"jsonrpc":"2.0","method":"resources/list"}';

    it('K5 an answer without an id is filtered', async () => {
      stack.upstream.respondWith((_request, response) => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ jsonrpc: '2.0', result: { resources: [{ uri: 'file:///secret.txt', name: 'secret-entry' }, { uri: 'file:///ok', name: 'o' }] } }));
      });
      const response = await call('/recorded/mcp', ROUTE_ONLY, LIST_NOTIFICATION);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).toContain('"name":"o"');
      expect(text).not.toContain('secret-entry');
    });

    it('K5 an answer with id null → 502', async () => {
      stack.upstream.respondWith((_request, response) => {
        response.setHeader('content-type', 'application/json');
        response.end(secretList(null));
      });
      const response = await call('/recorded/mcp', ROUTE_ONLY, LIST_NOTIFICATION);
      expect(response.status).toBe(502);
      expect(await response.text()).not.toContain('secret-entry');
    });

    it('control: the empty 202 a conforming upstream gives a notification passes', async () => {
      stack.upstream.respondWith((_request, response) => {
        response.writeHead(202);
        response.end();
      });
      const response = await call('/recorded/mcp', ROUTE_ONLY, LIST_NOTIFICATION);
      expect(response.status).toBe(202);
      expect(await response.text()).toBe('');
    });
  });

  it('K5 a 2xx answer other than 200 is filtered too', async () => {
    stack.upstream.respondWith((_request, response) => {
      response.writeHead(203, { 'content-type': 'application/json' });
      response.end(secretList(5));
    });
    const response = await call('/recorded/mcp', ROUTE_ONLY, LIST);
    expect(response.status).toBe(203);
    expect(await response.text()).not.toContain('secret-entry');
  });

  it.each([
    ['data that is not JSON (a Python client reads NaN)', `data: ${secretList(5).replace('"name":"o"', '"name":"o","x":NaN')}\n\n`],
    ['a result for another id', `data: ${secretList(6)}\n\n`],
  ])('K5 an SSE answer to a filtered list carrying %s → the stream fails, the list never arrives', async (_name, event) => {
    let upstreamResponse: ServerResponse | undefined;
    stack.upstream.respondWith((_request, response) => {
      openEventStream(response, '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"listing"}}');
      upstreamResponse = response;
    });
    const response = await call('/recorded/mcp', ROUTE_ONLY, LIST);
    expect(response.status).toBe(200);
    const reader = bodyReader(response);
    // Messages before the response pass as they come: notifications are not filtered.
    await reader.until('"listing"');
    upstreamResponse?.end(event);
    const rest = await reader.rest();
    expect(rest.clean).toBe(false);
    expect(rest.text).not.toContain('secret-entry');
  });

  it('K5 an SSE answer whose first event cannot be filtered → 502', async () => {
    stack.upstream.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`data: ${secretList(null)}\n\n`);
    });
    const response = await call('/recorded/mcp', ROUTE_ONLY, LIST);
    expect(response.status).toBe(502);
    expect(await response.text()).not.toContain('secret-entry');
  });

  it('K5 control: an SSE answer with a priming event, a notification and the matching result is filtered and complete', async () => {
    stack.upstream.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`id: p\ndata: \n\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}\n\ndata: ${secretList(5)}\n\n`);
    });
    const response = await call('/recorded/mcp', ROUTE_ONLY, LIST);
    expect(response.status).toBe(200);
    const rest = await bodyReader(response).rest();
    expect(rest.clean).toBe(true);
    expect(rest.text).toContain('"name":"o"');
    expect(rest.text).not.toContain('secret-entry');
  });

  it('K5 control: the same list request with a valid id is forwarded and filtered', async () => {
    stack.upstream.respondWith((request, response) => {
      response.setHeader('content-type', 'application/json');
      const { id } = JSON.parse(request.body) as { id: unknown };
      response.end(JSON.stringify({ jsonrpc: '2.0', id, result: { resources: [{ uri: 'FILE:///secret.txt', name: 's' }, { uri: 'file:///ok', name: 'o' }] } }));
    });
    const response = await call('/recorded/mcp', ROUTE_ONLY, '{"jsonrpc":"2.0","id":"x","method":"resources/list"}');
    expect(response.status).toBe(200);
    const listed = ((await response.json()) as { result: { resources: { name: string }[] } }).result.resources.map((entry) => entry.name);
    // K1 in list filtering too: the upper-case spelling of the secret is hidden.
    expect(listed).toEqual(['o']);
  });
});
