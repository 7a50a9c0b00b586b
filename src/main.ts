#!/usr/bin/env node
import { parseArgs } from 'node:util';

const HELP = `mcp-auth-gateway — OAuth protected-resource gateway for MCP servers (Streamable HTTP)

Usage:
  mcp-auth-gateway serve [--config FILE]      Start the gateway. FILE defaults to $MCP_GATEWAY_CONFIG.
                                              Reloads FILE on change and on SIGHUP; SIGTERM/SIGINT drain
                                              and exit within shutdown.grace_period. Metrics and health on
                                              the admin listener (admin.host:admin.port, default 127.0.0.1:9090).
  mcp-auth-gateway check-config FILE          Validate FILE: exit 0 when valid, 1 listing every problem
                                              with its YAML path (e.g. routes.0.tokens.jwt.issuer: ...).
  mcp-auth-gateway dev-auth-server --config FILE [--issuer URL] [--auto-approve] [--keys-file PATH]
                                              DEVELOPMENT ONLY: run an OAuth 2.1 authorization server
                                              (oidc-provider) issuing tokens for FILE's routes. The issuer
                                              defaults to the first route's first authorization_servers entry.
                                              It registers every client FILE expects at that issuer (consent
                                              sign-in, user_oauth clients) and serves user_oauth resources.
                                              Its signing key is kept in PATH (default: in the user cache
                                              directory, mode 0600), so a restart keeps issued tokens valid.
  mcp-auth-gateway probe URL [--token T | --token-file F] [--client-id ID] [--allow-private] [--json]
                      [--timeout 10s]
                                              Diagnose any MCP server's authorization as a spec client
                                              sees it: 401 challenge, protected resource metadata,
                                              authorization server metadata, registration, scopes, and
                                              with a token its iss, aud, lifetime and signature. One line
                                              per check; exit 0 no failure, 1 a check failed, 2 usage
                                              error or unreachable URL. --allow-private: let discovered
                                              URLs name loopback, private or link-local addresses.
  mcp-auth-gateway login URL [--scope S] [--client-id ID [--client-secret-file F]]
                      [--client-metadata-url URL] [--call-tool NAME [--tool-arguments JSON]]
                      [--allow-private] [--print-token] [--no-browser] [--timeout 10s]
                                              Sign in to an MCP server as the spec's client does
                                              (discovery, registration, PKCE S256, resource, state, iss,
                                              loopback redirect, step-up on 403; MCP 2026-07-28 when the
                                              server speaks it) and keep the tokens, readable by you only,
                                              in $XDG_CONFIG_HOME/mcp-auth-gateway/
                                              (~/.config/mcp-auth-gateway/, or $MCP_AUTH_GATEWAY_CONFIG_DIR):
                                              the next run uses them, refreshed when expired. Opens $BROWSER,
                                              open or xdg-open; prints the URL always. --print-token writes
                                              the access token to stdout. --allow-private as for probe.
  mcp-auth-gateway grants list --config FILE [--route R] [--subject S]
  mcp-auth-gateway grants revoke --config FILE [--route R] [--subject S]
                                              Users' grants of user_oauth routes in FILE's Redis: list them
                                              (no tokens), or revoke them (at the upstream's authorization
                                              server too, when it offers RFC 7009) with an audit line each.
  mcp-auth-gateway clients list --config FILE [--subject S] [--client C]
  mcp-auth-gateway clients revoke --config FILE [--subject S] [--client C]
                                              Consents people gave MCP clients at the gateway's own
                                              authorization server (authorization_server), in FILE's Redis:
                                              list them, or withdraw them (the grant and every token of it
                                              revoked; the person is asked again) with an audit line each.
  mcp-auth-gateway --help                     Show this help.

Secrets in the config are references: \${env:NAME} or \${file:/path}.
Docs: README.md (configuration reference, response contract).
`;

// Each command loads only what it needs, so `probe` and `login` start without the gateway's modules.
const processOutput = { stdout: (text: string) => process.stdout.write(text), stderr: (text: string) => process.stderr.write(text) };

export async function main(argv: readonly string[]): Promise<number | undefined> {
  // The spec client's commands parse their own options (src/client/).
  if (argv[0] === 'probe') return (await import('./client/probe-command.js')).runProbeCommand(argv.slice(1), processOutput);
  if (argv[0] === 'login') return (await import('./client/login-command.js')).runLoginCommand(argv.slice(1), processOutput);
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
      issuer: { type: 'string' },
      'auto-approve': { type: 'boolean' },
      route: { type: 'string' },
      subject: { type: 'string' },
      client: { type: 'string' },
      'keys-file': { type: 'string' },
    },
  });
  const [command, argument] = positionals;
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined && !values.help ? 2 : 0;
  }
  switch (command) {
    case 'check-config':
      return (await import('./config/cli.js')).checkConfigCommand(argument ?? values.config);
    case 'dev-auth-server':
      // Loaded on demand: oidc-provider is only needed by this development command.
      await (await import('./authserver/command.js')).devAuthServerCommand(values.config ?? argument, {
        issuer: values.issuer,
        autoApprove: values['auto-approve'] ?? false,
        keysFile: values['keys-file'],
      });
      return undefined;
    case 'grants':
      return (await import('./gateway/grants-command.js')).grantsCommand(argument, values.config, { route: values.route, subject: values.subject });
    case 'clients':
      return (await import('./gateway/clients-command.js')).clientsCommand(argument, values.config, { subject: values.subject, client: values.client });
    case 'serve':
      await (await import('./gateway/serve.js')).serveCommand(values.config ?? process.env.MCP_GATEWAY_CONFIG);
      return undefined;
    default:
      process.stderr.write(`unknown command "${command}"\n\n${HELP}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`mcp-auth-gateway: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
