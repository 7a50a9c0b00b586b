import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { clientEnvironment, packageBin, packageVersion, type ClientDriver } from '../context.js';
import { firstText } from './results.js';

const PACKAGE = 'mcp-remote';

/**
 * `npx mcp-remote <url>`, the stdio bridge desktop clients start: an MCP host talks to it over stdio (here the
 * SDK's stdio client, standing in for the host), and mcp-remote does discovery, registration, the browser
 * authorization (answered by the scripted browser) and the Streamable HTTP session with the gateway.
 */
export const mcpRemote: ClientDriver = {
  client: 'mcp-remote (stdio bridge)',
  version: () => packageVersion(PACKAGE),
  timeoutMs: 90_000,
  async run(context) {
    const directory = join(context.runDir, 'mcp-remote');
    await mkdir(directory, { recursive: true });
    const env = await clientEnvironment(directory, { MCP_REMOTE_CONFIG_DIR: join(directory, 'mcp-auth') });
    const transport = new StdioClientTransport({
      command: process.execPath,
      // Callback port 0: any free port (mcp-remote's default 3334 may be taken).
      args: [packageBin(PACKAGE, 'mcp-remote'), context.calcUrl.href, '0'],
      env: env as Record<string, string>,
      cwd: directory,
      stderr: 'pipe',
    });
    const log = createWriteStream(join(directory, 'mcp-remote.log'));
    transport.stderr?.pipe(log);
    const client = new Client({ name: 'matrix-stdio-host', version: '1.0.0' });
    try {
      await client.connect(transport);
      await client.listTools();
      const added = firstText(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) === '5';
      const multiplied = firstText(await client.callTool({ name: 'multiply', arguments: { x: 6, y: 7 } })) === '42';
      return { results: { added, multiplied } };
    } finally {
      await client.close();
      log.end();
    }
  },
};
