import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { runWhenMain, startMcpHttpServer, type McpHttpServer, type McpHttpServerOptions } from '../mcp-http-server.js';

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

runWhenMain(import.meta.url, 'calculator', 3001, ({ host, port }) => startCalculator({ host, port }));
