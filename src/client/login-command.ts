import { isHttpsUrl } from '@modelcontextprotocol/sdk/client/auth.js';
import { openBrowser, SIGN_IN_PREFIX } from './browser.js';
import { parseHttpUrl, parseTimeout, readSecretFile, UsageError, withUsageErrors, type CommandOutput, type ExitCode } from './command-line.js';
import { login, LoginError } from './login.js';
import { Redactor } from './redaction.js';
import { saveToken, tokenStorePath } from './token-store.js';

export const LOGIN_USAGE =
  'mcp-auth-gateway login <url> [--scope S] [--client-id ID [--client-secret-file F]] [--client-metadata-url URL] ' +
  '[--call-tool NAME [--tool-arguments JSON]] [--print-token] [--no-browser] [--timeout 10s]';

export interface LoginCommandOptions {
  readonly url?: string;
  readonly scope?: string;
  readonly clientId?: string;
  readonly clientSecretFile?: string;
  readonly clientMetadataUrl?: string;
  readonly callTool?: string;
  readonly toolArguments?: string;
  readonly printToken?: boolean;
  readonly noBrowser?: boolean;
  readonly timeout?: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const AUTHORIZATION_TIMEOUT_MS = 5 * 60_000;

function toolCall(options: LoginCommandOptions): { name: string; arguments: Record<string, unknown> } | undefined {
  if (options.callTool === undefined) {
    if (options.toolArguments !== undefined) throw new UsageError('--tool-arguments needs --call-tool');
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(options.toolArguments ?? '{}');
  } catch {
    throw new UsageError('--tool-arguments is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--tool-arguments must be a JSON object');
  return { name: options.callTool, arguments: parsed as Record<string, unknown> };
}

async function clientSecretOf(options: LoginCommandOptions): Promise<string | undefined> {
  if (options.clientSecretFile === undefined) return undefined;
  if (options.clientId === undefined) throw new UsageError('--client-secret-file needs --client-id');
  return readSecretFile(options.clientSecretFile, '--client-secret-file');
}

/**
 * `mcp-auth-gateway login`: signs in to an MCP server and keeps its token (0600, keyed by resource). Progress on
 * stderr; stdout carries the access token only with `--print-token`. Exit 0 signed in, 1 refused or failed, 2
 * usage error or unreachable URL.
 */
export function runLoginCommand(options: LoginCommandOptions, output: CommandOutput, env: NodeJS.ProcessEnv = process.env): Promise<ExitCode> {
  return withUsageErrors(output, LOGIN_USAGE, async () => {
    const url = parseHttpUrl(options.url, 'the MCP server URL');
    if (options.clientMetadataUrl !== undefined && !isHttpsUrl(options.clientMetadataUrl)) {
      throw new UsageError('--client-metadata-url must be an https URL with a path (the published document)');
    }
    const timeoutMs = parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS);
    const callTool = toolCall(options);
    const clientSecret = await clientSecretOf(options);
    const redactor = new Redactor();
    redactor.add(clientSecret);
    const log = (line: string) => output.stderr(`${redactor.apply(line)}\n`);

    const presentAuthorizationUrl = async (authorizationUrl: URL): Promise<void> => {
      log(`${SIGN_IN_PREFIX}${authorizationUrl.href}`);
      if (options.noBrowser !== true && !(await openBrowser(authorizationUrl))) log('(no browser could be opened: open the address above)');
    };
    try {
      const token = await login({
        url,
        scope: options.scope,
        clientId: options.clientId,
        clientSecret,
        clientMetadataUrl: options.clientMetadataUrl,
        callTool,
        timeoutMs,
        authorizationTimeoutMs: AUTHORIZATION_TIMEOUT_MS,
        presentAuthorizationUrl,
        log,
        redactor,
      });
      const path = tokenStorePath(env);
      await saveToken(path, token);
      log(`token for ${token.resource} saved in ${path} (readable by you only)`);
      if (options.printToken === true) output.stdout(`${token.accessToken}\n`);
      return 0;
    } catch (error) {
      log(`login failed: ${error instanceof Error ? error.message : String(error)}`);
      return error instanceof LoginError ? error.exitCode : 1;
    }
  });
}
