import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type GetPromptResult,
  type JSONRPCMessage,
  type ReadResourceResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';

/**
 * The MCP server the conformance suite's server scenarios expect (tool, resource and prompt names from the
 * scenario descriptions of @modelcontextprotocol/conformance 0.1.x), on the SDK's Streamable HTTP transport with
 * sessions and resumability. It stands behind the gateway in `run.ts`; it has no auth of its own.
 */
export interface ConformanceFixture {
  readonly url: string;
  close(): Promise<void>;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type ToolHandler = (args: Record<string, unknown>, extra: Extra) => CallToolResult | Promise<CallToolResult>;

/** 1×1 PNG and a minimal WAV, base64. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
/** Suggested SSE reconnection delay (SEP-1699 priming events). */
const RETRY_MS = 500;
const NO_ARGUMENTS: Tool['inputSchema'] = { type: 'object', properties: {} };

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An in-memory event store: every message sent on a stream can be replayed after its event id. */
function createEventStore(): EventStore {
  const events: { id: string; streamId: string; message: JSONRPCMessage }[] = [];
  return {
    storeEvent(streamId, message) {
      const id = `${streamId}::${String(events.length).padStart(8, '0')}`;
      events.push({ id, streamId, message });
      return Promise.resolve(id);
    },
    async replayEventsAfter(lastEventId, { send }) {
      const last = events.find((event) => event.id === lastEventId);
      if (last === undefined) throw new Error('unknown event id');
      for (const event of events.slice(events.indexOf(last) + 1)) {
        if (event.streamId === last.streamId) await send(event.id, event.message);
      }
      return last.streamId;
    },
  };
}

interface FixtureTool {
  readonly definition: Tool;
  readonly handler: ToolHandler;
}

function tool(name: string, description: string, handler: ToolHandler, inputSchema: Tool['inputSchema'] = NO_ARGUMENTS): FixtureTool {
  return { definition: { name, description, inputSchema }, handler };
}

const stringArgument = (name: string, description: string): Tool['inputSchema'] => ({
  type: 'object',
  properties: { [name]: { type: 'string', description } },
  required: [name],
});

async function notifySteps(extra: Extra, steps: readonly ServerNotification[]): Promise<void> {
  for (const notification of steps) {
    await extra.sendNotification(notification);
    await pause(20);
  }
}

/** A tool that asks the client to fill in a form (`elicitation/create`) and reports what came back. */
function elicitationTool(
  name: string,
  requestedSchema: Record<string, unknown>,
  messageOf: (args: Record<string, unknown>) => string,
  inputSchema: Tool['inputSchema'] = NO_ARGUMENTS,
): FixtureTool {
  return tool(
    name,
    'Asks the client to fill in a form (elicitation)',
    async (args, extra) => {
      const result = await extra.sendRequest(
        { method: 'elicitation/create', params: { message: messageOf(args), requestedSchema: requestedSchema as never } },
        ElicitResultSchema,
      );
      return text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
    },
    inputSchema,
  );
}

function tools(closeStream: (extra: Extra) => void): FixtureTool[] {
  return [
    tool('test_simple_text', 'Returns simple text content', () => text('This is a simple text response for testing.')),
    tool('test_image_content', 'Returns image content', () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] })),
    tool('test_audio_content', 'Returns audio content', () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] })),
    tool('test_embedded_resource', 'Returns an embedded resource', () => ({
      content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
    })),
    tool('test_multiple_content_types', 'Returns text, image and resource content', () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } },
      ],
    })),
    tool('test_tool_with_logging', 'Sends three log messages while running', async (_args, extra) => {
      await notifySteps(
        extra,
        ['Tool execution started', 'Tool processing data', 'Tool execution completed'].map((data) => ({
          method: 'notifications/message',
          params: { level: 'info', data },
        })),
      );
      return text('Tool with logging executed successfully');
    }),
    tool('test_tool_with_progress', 'Reports progress three times', async (_args, extra) => {
      const progressToken = extra._meta?.progressToken ?? 0;
      await notifySteps(
        extra,
        [0, 50, 100].map((progress) => ({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
        })),
      );
      return text(String(progressToken));
    }),
    tool('test_error_handling', 'Always fails', () => ({
      isError: true,
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    })),
    tool('test_reconnection', 'Closes its SSE stream mid-call; the result arrives after the client reconnects (SEP-1699)', async (_args, extra) => {
      closeStream(extra);
      await pause(100);
      return text('Reconnection test completed successfully.');
    }),
    tool(
      'test_sampling',
      'Asks the client for an LLM completion',
      async ({ prompt }, extra) => {
        const result = await extra.sendRequest(
          { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: String(prompt) } }], maxTokens: 100 } },
          CreateMessageResultSchema,
        );
        return text(`LLM response: ${result.content.type === 'text' ? result.content.text : result.content.type}`);
      },
      stringArgument('prompt', 'The prompt to send to the LLM'),
    ),
    elicitationTool(
      'test_elicitation',
      { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] },
      ({ message }) => String(message),
      stringArgument('message', 'The message to show the user'),
    ),
    elicitationTool('test_elicitation_sep1034_defaults', {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
      required: [],
    }, () => 'Please review and update the form fields with defaults'),
    elicitationTool('test_elicitation_sep1330_enums', {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          description: 'Select one option with titles',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: {
          type: 'string',
          description: 'Select one option (legacy)',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: {
          type: 'array',
          description: 'Select multiple options',
          minItems: 1,
          maxItems: 3,
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
          type: 'array',
          description: 'Select multiple options with titles',
          minItems: 1,
          maxItems: 3,
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
      required: [],
    }, () => 'Please select options from the enum fields'),
    tool('json_schema_2020_12_tool', 'Tool whose input schema uses JSON Schema 2020-12 features (SEP-1613)', (args) => text(JSON.stringify(args)), {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    }),
  ];
}

const RESOURCES = [
  { uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource', mimeType: 'text/plain', body: { text: 'This is the content of the static text resource.' } },
  { uri: 'test://static-binary', name: 'static-binary', title: 'Static Binary Resource', mimeType: 'image/png', body: { blob: PNG } },
  { uri: 'test://watched-resource', name: 'watched-resource', title: 'Watched Resource', mimeType: 'text/plain', body: { text: 'Watched resource content' } },
];
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;

function readResource(uri: string): ReadResourceResult {
  const resource = RESOURCES.find((entry) => entry.uri === uri);
  if (resource !== undefined) {
    return { contents: [{ uri, mimeType: resource.mimeType, ...resource.body }] };
  }
  const id = TEMPLATE.exec(uri)?.[1];
  if (id === undefined) throw new Error(`unknown resource ${uri}`);
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] };
}

const PROMPTS = [
  { name: 'test_simple_prompt', description: 'A simple prompt without arguments' },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that includes an embedded resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  { name: 'test_prompt_with_image', description: 'A prompt that includes image content' },
];

function getPrompt(name: string, args: Record<string, string>): GetPromptResult {
  switch (name) {
    case 'test_simple_prompt':
      return { messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] };
    case 'test_prompt_with_arguments':
      return { messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` } }] };
    case 'test_prompt_with_embedded_resource':
      return {
        messages: [
          { role: 'user', content: { type: 'resource', resource: { uri: args.resourceUri ?? '', mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
          { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
        ],
      };
    case 'test_prompt_with_image':
      return {
        messages: [
          { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
          { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
        ],
      };
    default:
      throw new Error(`unknown prompt ${name}`);
  }
}

/** One low-level SDK server per session, declaring every capability the scenarios exercise. */
function createFixtureServer(closeStream: (extra: Extra) => void): Server {
  const server = new Server(
    { name: 'mcp-auth-gateway-conformance-fixture', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
    },
  );
  const toolTable = new Map(tools(closeStream).map((entry) => [entry.definition.name, entry]));
  const log = (data: string) => server.sendLoggingMessage({ level: 'info', logger: 'conformance-fixture', data }).catch(() => undefined);

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...toolTable.values()].map((entry) => entry.definition) }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const entry = toolTable.get(request.params.name);
    if (entry === undefined) return { isError: true, content: [{ type: 'text', text: `Unknown tool: ${request.params.name}` }] };
    return entry.handler(request.params.arguments ?? {}, extra);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: RESOURCES.map(({ uri, name, title, mimeType }) => ({ uri, name, title, mimeType })),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{ uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Resource Template', mimeType: 'application/json' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => readResource(request.params.uri));
  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    void log(`Subscribed to resource: ${request.params.uri}`);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    void log(`Unsubscribed from resource: ${request.params.uri}`);
    return {};
  });
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => getPrompt(request.params.name, request.params.arguments ?? {}));
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    void log(`Log level set to: ${request.params.level}`);
    return {};
  });
  server.setRequestHandler(CompleteRequestSchema, () => ({ completion: { values: [], total: 0, hasMore: false } }));
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** Starts the fixture on 127.0.0.1 (`port`, default a free one), MCP endpoint `/mcp`. */
export async function startConformanceFixture(port = 0): Promise<ConformanceFixture> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const closeStream = (extra: Extra): void => {
    if (extra.sessionId !== undefined) sessions.get(extra.sessionId)?.closeSSEStream(extra.requestId);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if ((req.url ?? '').split('?', 1)[0] !== '/mcp') return refuse(res, 404, 'Not Found');
    const sessionId = req.headers['mcp-session-id'];
    const session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (req.method !== 'POST') {
      if (session === undefined) return refuse(res, 400, 'Invalid or missing session ID');
      return session.handleRequest(req, res);
    }
    const body = await readJson(req);
    if (session !== undefined) return session.handleRequest(req, res, body);
    if (sessionId !== undefined || !isInitializeRequest(body)) return refuse(res, 400, 'Bad Request: No valid session ID provided');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: createEventStore(),
      retryInterval: RETRY_MS,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await createFixtureServer(closeStream).connect(transport);
    await transport.handleRequest(req, res, body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) refuse(res, 500, 'Internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((transport) => transport.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
