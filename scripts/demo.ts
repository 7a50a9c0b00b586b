/**
 * `npm run demo`: the development authorization server, the example calculator, the example notes server with its
 * own ("vendor") development authorization server, and the gateway on loopback, in one process, with an in-memory
 * cache. Ctrl-C stops all five.
 */
import { defaultClientsFile, defaultSigningKeysFile } from '../src/authserver/index.js';
import { DEMO_PORTS, startDemoStack } from '../examples/demo/stack.js';

try {
  // Logs at config/demo.yaml's log.level (info: one audit line per decision); signing keys and registered
  // clients survive restarts.
  const stack = await startDemoStack({
    signingKeysFile: (issuer) => defaultSigningKeysFile(issuer),
    clientsFile: (issuer) => defaultClientsFile(issuer),
  });
  const calc = `${stack.gatewayUrl}/calc/mcp`;
  process.stdout.write(`
mcp-auth-gateway demo is running (development authorization server: do not expose it)

  MCP endpoint (JWT tokens)       ${calc}
  MCP endpoint (opaque tokens)    ${stack.gatewayUrl}/calc-opaque/mcp
  MCP endpoint (scopes up front)  ${stack.gatewayUrl}/calc-upfront/mcp   (for clients that cannot step up)
  MCP endpoint (user_oauth)       ${stack.gatewayUrl}/notes/mcp   (each user connects their own notes account)
  MCP endpoint (gateway as AS)    ${stack.gatewayUrl}/calc-as/mcp   (the gateway issues the tokens; sign-in at the dev server)
  Protected resource metadata     ${stack.gatewayUrl}/.well-known/oauth-protected-resource/calc/mcp
  Authorization server            ${stack.authServer.issuer}   (auto-approves as demo-user)
  Upstream calculator             ${stack.calculator.url}   (no auth of its own: loopback only)
  Upstream notes server           ${stack.notes.url}   (trusts only its own authorization server)
  Its authorization server        ${stack.vendorAuthServer.issuer}   (the "vendor"; auto-approves as demo-user)
  Consent pages                   ${stack.gatewayUrl}/consent/grants   (your connected accounts)

Connect:
  npm run demo:client                               headless official SDK client: OAuth flow, add, multiply,
                                                    then notes: URL elicitation, consent, add_note, list_notes
  npx @modelcontextprotocol/inspector               Add Servers → Add manually → streamable-http, URL ${calc}
  curl -i -X POST ${calc}   →  401 with the WWW-Authenticate challenge

Ctrl-C to stop.
`);
  const stop = () => {
    stack.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  process.stderr.write(
    code === 'EADDRINUSE'
      ? `demo: a port is already in use; the demo needs ${Object.values(DEMO_PORTS).join(', ')} on 127.0.0.1\n`
      : `demo failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}
