import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Logger } from 'pino';
import { startClientMetadataServer } from '../../src/client/client-metadata-server.js';
import { headlessClientMetadata, HeadlessOAuthClientProvider } from '../../examples/demo/headless-oauth-provider.js';
import { freePort } from '../helpers/net.js';
import { assembleGateway } from '../../src/gateway/assemble.js';
import { devAuthServerOptionsFromConfig, startDevAuthServer } from '../../src/authserver/index.js';
import { parseConfig } from '../../src/config/load.js';
import { startConformanceFixture } from './fixture-server.js';

export interface ConformanceStack {
  /** The gateway's MCP endpoint the suite runs against. */
  readonly mcpUrl: URL;
  /** A valid access token for it, from the development authorization server. */
  readonly token: string;
  close(): Promise<void>;
}

/** Long enough for the whole suite: the suite's clients cannot refresh. */
const TOKEN_TTL_SECONDS = 3600;
const REDIRECT_URL = 'http://127.0.0.1/conformance/callback';

function gatewayYaml(gatewayPort: number, authServerPort: number, upstreamUrl: string): string {
  const issuer = `http://127.0.0.1:${authServerPort}`;
  return `
listen: { host: 127.0.0.1, port: ${gatewayPort} }
public_url: http://127.0.0.1:${gatewayPort}
routes:
  - name: conformance
    path: /mcp
    upstream: { url: ${upstreamUrl} }
    authorization_servers: [${issuer}]
    scopes_supported: [mcp:tools]
    tokens:
      jwt: { issuer: ${issuer}, algorithms: [ES256], require_typ: true }
    policy:
      scopes: [mcp:tools]
`;
}

/**
 * Obtains the token the way an MCP client does, through the gateway: protected resource metadata discovery,
 * authorization server metadata, a Client ID Metadata Document as client_id, authorization code with PKCE and
 * resource, token.
 */
async function obtainToken(mcpUrl: URL): Promise<string> {
  const base = { redirectUrl: REDIRECT_URL, clientName: 'mcp-auth-gateway conformance run', refreshTokens: false };
  const document = await startClientMetadataServer(headlessClientMetadata(base));
  try {
    const provider = new HeadlessOAuthClientProvider({ ...base, clientMetadataUrl: document.url });
    if ((await auth(provider, { serverUrl: mcpUrl })) !== 'REDIRECT') throw new Error('expected an authorization redirect');
    if ((await auth(provider, { serverUrl: mcpUrl, authorizationCode: provider.takeAuthorizationCode() })) !== 'AUTHORIZED') {
      throw new Error('the authorization code was not exchanged');
    }
    const token = provider.tokens()?.access_token;
    if (token === undefined) throw new Error('no access token');
    return token;
  } finally {
    await document.close();
  }
}

/**
 * The conformance fixture behind the gateway (one JWT route, no auth bypass), the development authorization
 * server issuing its tokens, everything on free loopback ports.
 */
export async function startConformanceStack(logger: Logger): Promise<ConformanceStack> {
  const closers: (() => Promise<void>)[] = [];
  const close = async (): Promise<void> => {
    for (const closer of closers.reverse()) await closer();
  };
  try {
    const fixture = await startConformanceFixture();
    closers.push(() => fixture.close());
    const gatewayPort = await freePort();
    const parsed = parseConfig(gatewayYaml(gatewayPort, await freePort(), fixture.url), { source: 'conformance gateway' });
    if (!parsed.ok) throw new Error(parsed.problems.map((problem) => `${problem.path}: ${problem.message}`).join('; '));
    const authServer = await startDevAuthServer({
      ...devAuthServerOptionsFromConfig(parsed.config, { autoApprove: true }),
      accessTokenTtlSeconds: TOKEN_TTL_SECONDS,
      logger: logger.child({ component: 'dev-auth-server' }),
    });
    closers.push(() => authServer.close());
    const gateway = assembleGateway(parsed.config, { logger });
    closers.push(() => gateway.close());
    await gateway.app.listen({ host: '127.0.0.1', port: gatewayPort });
    const mcpUrl = new URL('/mcp', parsed.config.publicUrl);
    return { mcpUrl, token: await obtainToken(mcpUrl), close };
  } catch (error) {
    await close();
    throw error;
  }
}
