import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { startMcpHttpServer, type McpHttpServer, type McpHttpServerOptions } from '../mcp-http-server.js';

export type CalculatorOptions = Pick<McpHttpServerOptions, 'host' | 'port'>;

export type Calculator = McpHttpServer;

function text(value: number): { content: [{ type: 'text'; text: string }] } {
  return { content: [{ type: 'text', text: String(value) }] };
}

/** One MCP server per session, as the SDK's transport expects; the tools are stateless. */
export function createCalculatorServer(): McpServer {
  const server = new McpServer({ name: 'calculator', version: '1.0.0' });
  server.registerTool(
    'add',
    {
      title: 'Add',
      description: 'Adds two numbers and returns the sum.',
      inputSchema: { a: z.number().describe('First addend'), b: z.number().describe('Second addend') },
    },
    ({ a, b }) => text(a + b),
  );
  server.registerTool(
    'multiply',
    {
      title: 'Multiply',
      description: 'Multiplies two numbers and returns the product.',
      inputSchema: { x: z.number().describe('First factor'), y: z.number().describe('Second factor') },
    },
    ({ x, y }) => text(x * y),
  );
  return server;
}

/** The calculator: the two tools, no auth of its own (loopback only, behind the gateway). */
export function startCalculator(options: CalculatorOptions = {}): Promise<Calculator> {
  return startMcpHttpServer({ ...options, createServer: createCalculatorServer });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { host: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '3001' } },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new TypeError('--port must be an integer from 0 to 65535');
  const calculator = await startCalculator({ host: values.host, port });
  console.log(`calculator MCP server listening at ${calculator.url}`);
  const stop = (): void => {
    calculator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
