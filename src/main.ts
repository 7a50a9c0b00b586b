#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { loadConfigFile, type ConfigProblem } from './config/load.js';
import type { CompiledConfig } from './config/types.js';
import { createLogger } from './observability/logger.js';
import { serveGateway } from './serve.js';

const HELP = `mcp-auth-gateway — OAuth protected-resource gateway for MCP servers (Streamable HTTP)

Usage:
  mcp-auth-gateway serve [--config FILE]      Start the gateway. FILE defaults to $MCP_GATEWAY_CONFIG.
                                              Reloads FILE on change and on SIGHUP; SIGTERM/SIGINT drain
                                              and exit within shutdown.grace_period. Metrics and health on
                                              the admin listener (admin.host:admin.port, default 127.0.0.1:9090).
  mcp-auth-gateway check-config FILE          Validate FILE: exit 0 when valid, 1 listing every problem
                                              with its YAML path (e.g. routes.0.tokens.jwt.issuer: ...).
  mcp-auth-gateway dev-auth-server --config FILE [--issuer URL] [--auto-approve]
                                              DEVELOPMENT ONLY: run an OAuth 2.1 authorization server
                                              (oidc-provider) issuing tokens for FILE's routes. The issuer
                                              defaults to the first route's first authorization_servers entry.
  mcp-auth-gateway --help                     Show this help.

Secrets in the config are references: \${env:NAME} or \${file:/path}.
Docs: README.md (configuration reference, response contract).
`;

function printProblems(file: string, problems: readonly ConfigProblem[]): void {
  process.stderr.write(`${file}: ${problems.length} problem(s)\n`);
  for (const problem of problems) {
    process.stderr.write(`  ${problem.path === '' ? '(file)' : problem.path}: ${problem.message}\n`);
  }
}

async function loadOrExit(file: string): Promise<CompiledConfig> {
  const result = await loadConfigFile(file);
  if (!result.ok) {
    printProblems(file, result.problems);
    process.exit(1);
  }
  return result.config;
}

async function checkConfig(file: string | undefined): Promise<number> {
  if (!file) {
    process.stderr.write('check-config needs a FILE argument\n');
    return 2;
  }
  const config = await loadOrExit(file);
  for (const warning of config.warnings) process.stderr.write(`warning: ${warning}\n`);
  process.stdout.write(`${file}: OK (${config.routes.length} route(s): ${config.routes.map((route) => route.path).join(', ')})\n`);
  return 0;
}

async function serve(file: string | undefined): Promise<void> {
  if (!file) {
    process.stderr.write('serve needs --config FILE or MCP_GATEWAY_CONFIG\n');
    process.exit(2);
  }
  const config = await loadOrExit(file);
  const logger = createLogger({ level: config.logLevel });
  for (const warning of config.warnings) logger.warn({ warning }, 'config warning');
  await serveGateway({ file, config, logger });
}

async function devAuthServer(file: string | undefined, options: { issuer?: string; autoApprove: boolean }): Promise<void> {
  if (!file) {
    process.stderr.write('dev-auth-server needs --config FILE (the gateway config it issues tokens for)\n');
    process.exit(2);
  }
  const config = await loadOrExit(file);
  // Loaded on demand: oidc-provider is only needed by this development command.
  const { devAuthServerOptionsFromConfig, startDevAuthServer } = await import('./authserver/index.js');
  const logger = createLogger({ level: config.logLevel });
  const server = await startDevAuthServer({ ...devAuthServerOptionsFromConfig(config, options), logger });
  logger.info({ issuer: server.issuer, autoApprove: options.autoApprove }, 'development authorization server listening');
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

export async function main(argv: readonly string[]): Promise<number | undefined> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
      issuer: { type: 'string' },
      'auto-approve': { type: 'boolean' },
    },
  });
  const [command, argument] = positionals;
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined && !values.help ? 2 : 0;
  }
  switch (command) {
    case 'check-config':
      return checkConfig(argument ?? values.config);
    case 'dev-auth-server':
      await devAuthServer(values.config ?? argument, { issuer: values.issuer, autoApprove: values['auto-approve'] ?? false });
      return undefined;
    case 'serve':
      await serve(values.config ?? process.env.MCP_GATEWAY_CONFIG);
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
