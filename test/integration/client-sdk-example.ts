import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DemoInMemoryAuthProvider } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { createOAuthMetadata, getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createCalculatorServer } from '../../examples/calculator/server.js';

export interface SdkExampleServer {
  /** The MCP endpoint. */
  readonly url: URL;
  readonly authorizationServer: URL;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/**
 * A deployment this project did not write: the official SDK's OAuth example (`simpleStreamableHttp.js --oauth`) as
 * its parts compose it, in process. That script listens on fixed ports on every interface as soon as it is imported,
 * so its parts are used instead: the example's `DemoInMemoryAuthProvider` behind the SDK's `mcpAuthRouter` (the
 * authorization server), and an MCP server with the SDK's `mcpAuthMetadataRouter` and `requireBearerAuth`
 * (strict resource check, as with `--oauth-strict`), each on its own loopback port.
 */
export async function startSdkExampleServer(): Promise<SdkExampleServer> {
  const authApp = createMcpExpressApp();
  const authHttp = createServer(authApp);
  const authorizationServer = new URL(`http://127.0.0.1:${await listen(authHttp)}`);
  const mcpApp = createMcpExpressApp();
  const mcpHttp = createServer(mcpApp);
  const url = new URL(`http://127.0.0.1:${await listen(mcpHttp)}/mcp`);

  const provider = new DemoInMemoryAuthProvider((resource) => resource?.href === url.href);
  const scopesSupported = ['mcp:tools'];
  authApp.use(mcpAuthRouter({ provider, issuerUrl: authorizationServer, scopesSupported }));
  mcpApp.use(
    mcpAuthMetadataRouter({
      oauthMetadata: createOAuthMetadata({ provider, issuerUrl: authorizationServer, scopesSupported }),
      resourceServerUrl: url,
      scopesSupported,
      resourceName: 'MCP Demo Server',
    }),
  );
  const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(url), expectedResource: url });
  mcpApp.post('/mcp', bearer, (request, response) => {
    const server = createCalculatorServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => void transport.close().then(() => server.close()));
    void server.connect(transport).then(() => transport.handleRequest(request, response, request.body));
  });
  mcpApp.get('/mcp', bearer, (_request, response) => {
    response.status(405).set('allow', 'POST').end();
  });
  return { url, authorizationServer, close: async () => void (await Promise.all([closeServer(mcpHttp), closeServer(authHttp)])) };
}
