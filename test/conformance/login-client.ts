/**
 * The client under test in the conformance suite's client phase: `mcp-auth-gateway login`, the real command.
 *
 *   node --import tsx test/conformance/login-client.ts <server URL>
 *
 * The suite appends the scenario's server URL and passes pre-registered credentials, when a scenario has them, in
 * MCP_CONFORMANCE_CONTEXT. This driver only does what a user would: it puts the credentials on the command line (the
 * secret in a 0600 file) and plays the browser, following the printed "Sign in at:" address to login's loopback
 * redirect (test/helpers/cli.ts). Everything else (discovery, registration, PKCE, state, resource, step-up) is
 * login's own.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_DIR_VARIABLE } from '../../src/client/token-store.js';
import { runCli } from '../helpers/cli.js';

/** The document URL the suite's Client ID Metadata Document scenario expects as client_id (it is never fetched). */
const PUBLISHED_CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
/** Every scenario's server has this tool; calling it is what lets the step-up scenario ask for more scope. */
const TOOL = 'test-tool';

interface ConformanceContext {
  readonly client_id?: string;
  readonly client_secret?: string;
}

function loginArguments(serverUrl: string, context: ConformanceContext, secretFile: string): string[] {
  const args = ['login', serverUrl, '--no-browser', '--call-tool', TOOL, '--client-metadata-url', PUBLISHED_CLIENT_METADATA_URL];
  if (context.client_id !== undefined) args.push('--client-id', context.client_id);
  if (context.client_secret !== undefined) {
    writeFileSync(secretFile, context.client_secret, { mode: 0o600 });
    args.push('--client-secret-file', secretFile);
  }
  return args;
}

async function main(): Promise<number> {
  const serverUrl = process.argv[2];
  if (serverUrl === undefined) throw new Error('usage: login-client.ts <server URL>');
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as ConformanceContext;
  const home = mkdtempSync(join(tmpdir(), 'mcp-login-conformance-'));
  try {
    const { code } = await runCli(loginArguments(serverUrl, context, join(home, 'secret')), { env: { [CONFIG_DIR_VARIABLE]: home }, echo: true });
    return code ?? 1;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`login-client: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
