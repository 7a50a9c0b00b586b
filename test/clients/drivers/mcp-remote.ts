import { createWriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { clientEnvironment, packageBin, packageVersion, type ClientDriver, type MatrixContext } from '../context.js';
import { otherRouteKinds } from './route-kinds.js';
import { firstText } from './results.js';

const PACKAGE = 'mcp-remote';

/** One mcp-remote bridge to `url`, with the SDK's stdio client as its host; its own config dir (tokens) per `name`. */
async function bridge(context: MatrixContext, url: URL, name: string): Promise<{ client: Client; close(): Promise<void> }> {
  const directory = join(context.runDir, 'mcp-remote', name);
  await mkdir(directory, { recursive: true });
  const env = await clientEnvironment(directory, { MCP_REMOTE_CONFIG_DIR: join(directory, 'mcp-auth') });
  const transport = new StdioClientTransport({
    command: process.execPath,
    // Callback port 0: any free port (mcp-remote's default 3334 may be taken).
    args: [packageBin(PACKAGE, 'mcp-remote'), url.href, '0'],
    env: env as Record<string, string>,
    cwd: directory,
    stderr: 'pipe',
  });
  const logFile = join(directory, 'mcp-remote.log');
  const log = createWriteStream(logFile);
  transport.stderr?.pipe(log);
  const client = new Client({ name: 'matrix-stdio-host', version: '1.0.0' });
  const close = async () => {
    await client.close();
    await new Promise((resolve) => log.end(resolve));
  };
  try {
    await client.connect(transport);
  } catch (error) {
    await close();
    // mcp-remote exits when the server refuses its own initialize; what it printed is what a host shows in its log.
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${await readFile(logFile, 'utf8')}`, { cause: error });
  }
  return { client, close: () => close() };
}

/** One tool call through a bridge of its own, its first text. */
async function callThrough(context: MatrixContext, url: URL, name: string, tool: string, args: Record<string, number>): Promise<string> {
  const connection = await bridge(context, url, name);
  try {
    return firstText(await connection.client.callTool({ name: tool, arguments: args })) ?? '';
  } finally {
    await connection.close();
  }
}

/**
 * `npx mcp-remote <url>`, the stdio bridge desktop clients start: an MCP host talks to it over stdio (here the
 * SDK's stdio client, standing in for the host), and mcp-remote does discovery, registration, the browser
 * authorization (answered by the scripted browser) and the Streamable HTTP session with the gateway. Then the
 * other route kinds, each through a bridge of its own (the per-user grant route's twice, as a host restarts it
 * after the person connected their account; mcp-remote keeps its tokens in its config dir).
 */
export const mcpRemote: ClientDriver = {
  client: 'mcp-remote (stdio bridge)',
  version: () => packageVersion(PACKAGE),
  timeoutMs: 150_000,
  async run(context) {
    const calc = await bridge(context, context.calcUrl, 'calc');
    const { client } = calc;
    let results;
    try {
      await client.listTools();
      const added = firstText(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) === '5';
      const multiplied = firstText(await client.callTool({ name: 'multiply', arguments: { x: 6, y: 7 } })) === '42';
      results = { added, multiplied };
    } finally {
      await calc.close();
    }
    // The per-user grant route's two bridges share a config dir (its tokens), as a host restarting it does.
    const routes = await otherRouteKinds(
      context,
      (url, tool, args, session) => callThrough(context, url, session, tool, args),
      "link in mcp-remote's stderr log; the host sees only 'Connection closed'",
    );
    return { results, routes };
  },
};
