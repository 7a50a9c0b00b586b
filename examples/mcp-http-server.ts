import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

export interface McpHttpServerOptions {
  /** One MCP server per session, as the SDK's transport expects. */
  readonly createServer: () => McpServer;
  /** Default 127.0.0.1: example servers belong behind the gateway. */
  readonly host?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** The caller of a request, from its bearer token; `undefined` → 401. Absent: no auth of its own. */
  readonly authenticate?: (req: IncomingMessage) => Promise<AuthInfo | undefined>;
}

export interface McpHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

type AuthenticatedRequest = IncomingMessage & { auth?: AuthInfo };

const MCP_PATH = '/mcp';
const MAX_BODY_BYTES = 1024 * 1024;
const CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'Mcp-Session-Id',
};
const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-headers': 'Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID',
  'access-control-max-age': '600',
};

function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { ...CORS_HEADERS, 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function sendText(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { ...CORS_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
  res.end(body);
}

class BodyTooLarge extends Error {}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

type Parsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false };

function parseJson(body: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch {
    return { ok: false };
  }
}

function sendUnauthorized(res: ServerResponse): void {
  res.writeHead(401, { ...CORS_HEADERS, 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' });
  res.end(JSON.stringify({ error: 'invalid_token' }));
}

/**
 * The SDK's Streamable HTTP transport behind node:http, with the session handling of the SDK's example server:
 * a known Mcp-Session-Id is routed to its transport, an initialize request without one opens a session, anything
 * else is a 400. A closed transport's session is forgotten. With `authenticate`, every request needs a bearer
 * token it accepts (else 401); tools see it as `extra.authInfo`.
 */
export async function startMcpHttpServer(options: McpHttpServerOptions): Promise<McpHttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function openSession(req: AuthenticatedRequest, res: ServerResponse, body: unknown): Promise<void> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await options.createServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handlePost(req: AuthenticatedRequest, res: ServerResponse, session: StreamableHTTPServerTransport | undefined): Promise<void> {
    const parsed = parseJson(await readBody(req));
    if (session !== undefined) {
      if (!parsed.ok) return sendJsonRpcError(res, 400, -32700, 'Parse error');
      return session.handleRequest(req, res, parsed.value);
    }
    if (req.headers['mcp-session-id'] === undefined && parsed.ok && isInitializeRequest(parsed.value)) {
      return openSession(req, res, parsed.value);
    }
    sendJsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
  }

  async function handle(req: AuthenticatedRequest, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== MCP_PATH) return sendText(res, 404, 'Not Found');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...CORS_HEADERS, ...PREFLIGHT_HEADERS });
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
    if (options.authenticate) {
      const auth = await options.authenticate(req);
      if (auth === undefined) return sendUnauthorized(res);
      req.auth = auth;
    }
    const sessionId = req.headers['mcp-session-id'];
    const session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    switch (req.method) {
      case 'POST':
        return handlePost(req, res, session);
      case 'GET':
      case 'DELETE':
        if (session === undefined) return sendText(res, 400, 'Invalid or missing session ID');
        return session.handleRequest(req, res);
      default:
        res.setHeader('allow', 'GET, POST, DELETE, OPTIONS');
        return sendText(res, 405, 'Method Not Allowed');
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.end();
        return;
      }
      if (error instanceof BodyTooLarge) sendJsonRpcError(res, 413, -32000, 'Request body too large');
      else sendJsonRpcError(res, 500, -32603, 'Internal error');
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    await Promise.allSettled([...sessions.values()].map((transport) => transport.close()));
    await new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    });
  }
  return { url: `http://${urlHost}:${port}${MCP_PATH}`, close: () => (closing ??= close()) };
}


/**
 * `tsx <server>.ts [--host H] [--port P] [--name value...]` when `moduleUrl` is the script node runs: starts the
 * server with the parsed options, prints its URL, stops on SIGINT/SIGTERM; a failure is printed and exits 1.
 */
export function runWhenMain(
  moduleUrl: string,
  name: string,
  defaultPort: number,
  start: (options: { host: string; port: number; values: Readonly<Record<string, string | undefined>> }) => Promise<McpHttpServer>,
  extraOptions: readonly string[] = [],
): void {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const run = async () => {
    const { values } = parseArgs({
      options: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: String(defaultPort) },
        ...Object.fromEntries(extraOptions.map((option) => [option, { type: 'string' as const }])),
      },
    });
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new TypeError('--port must be an integer from 0 to 65535');
    const server = await start({ host: String(values.host), port, values });
    console.log(`${name} MCP server listening at ${server.url}`);
    const stop = (): void => {
      server.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  };
  run().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
