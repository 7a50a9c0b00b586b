import { isHttpsUrl } from '@modelcontextprotocol/sdk/client/auth.js';
import { openBrowser, SIGN_IN_PREFIX } from './browser.js';
import { parseCommandLine, parseHttpUrl, parseTimeout, readSecretFile, UsageError, withUsageErrors, type CommandOutput, type ExitCode } from './command-line.js';
import { login } from './login.js';
import { LoginError } from './login-error.js';
import { Redactor } from './redaction.js';
import { secureTokenStore, tokenStorePath } from './token-store.js';

export const LOGIN_USAGE =
  'mcp-auth-gateway login <url> [--scope S] [--client-id ID [--client-secret-file F]] [--client-metadata-url URL] ' +
  '[--call-tool NAME [--tool-arguments JSON]] [--allow-private] [--print-token] [--no-browser] [--timeout 10s]';

const OPTIONS = {
  scope: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret-file': { type: 'string' },
  'client-metadata-url': { type: 'string' },
  'call-tool': { type: 'string' },
  'tool-arguments': { type: 'string' },
  'allow-private': { type: 'boolean' },
  'print-token': { type: 'boolean' },
  'no-browser': { type: 'boolean' },
  timeout: { type: 'string' },
} as const;

const DEFAULT_TIMEOUT_MS = 10_000;
const AUTHORIZATION_TIMEOUT_MS = 5 * 60_000;

function toolCall(name: string | undefined, json: string | undefined): { name: string; arguments: Record<string, unknown> } | undefined {
  if (name === undefined) {
    if (json !== undefined) throw new UsageError('--tool-arguments needs --call-tool');
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json ?? '{}');
  } catch {
    throw new UsageError('--tool-arguments is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--tool-arguments must be a JSON object');
  return { name, arguments: parsed as Record<string, unknown> };
}

async function clientSecretOf(clientId: string | undefined, file: string | undefined): Promise<string | undefined> {
  if (file === undefined) return undefined;
  if (clientId === undefined) throw new UsageError('--client-secret-file needs --client-id');
  return readSecretFile(file, '--client-secret-file');
}

/**
 * `mcp-auth-gateway login`: signs in to an MCP server and keeps its tokens (0600, keyed by authorization server and
 * resource; a stored token is used again, and refreshed when it has expired). Progress on
 * stderr; stdout carries the access token only with `--print-token`. Exit 0 signed in, 1 refused or failed, 2
 * usage error or unreachable URL.
 */
export function runLoginCommand(args: readonly string[], output: CommandOutput, env: NodeJS.ProcessEnv = process.env): Promise<ExitCode> {
  return withUsageErrors(output, LOGIN_USAGE, async () => {
    const { values, positionals } = parseCommandLine(args, OPTIONS);
    const url = parseHttpUrl(positionals[0], 'the MCP server URL');
    const clientMetadataUrl = values['client-metadata-url'];
    if (clientMetadataUrl !== undefined && !isHttpsUrl(clientMetadataUrl)) {
      throw new UsageError('--client-metadata-url must be an https URL with a path (the published document)');
    }
    const timeoutMs = parseTimeout(values.timeout, DEFAULT_TIMEOUT_MS);
    const callTool = toolCall(values['call-tool'], values['tool-arguments']);
    const clientId = values['client-id'];
    const clientSecret = await clientSecretOf(clientId, values['client-secret-file']);
    const redactor = new Redactor();
    redactor.add(clientSecret);
    const log = (line: string) => output.stderr(`${redactor.apply(line)}\n`);

    const presentAuthorizationUrl = async (authorizationUrl: URL): Promise<void> => {
      log(`${SIGN_IN_PREFIX}${authorizationUrl.href}`);
      if (values['no-browser'] !== true && !(await openBrowser(authorizationUrl))) log('(no browser could be opened: open the address above)');
    };
    const path = tokenStorePath(env);
    try {
      for (const fixed of await secureTokenStore(path)) log(`fixed: ${fixed}`);
      const token = await login({
        url,
        scope: values.scope,
        clientId,
        clientSecret,
        clientMetadataUrl,
        allowPrivate: values['allow-private'] === true,
        callTool,
        timeoutMs,
        authorizationTimeoutMs: AUTHORIZATION_TIMEOUT_MS,
        presentAuthorizationUrl,
        log,
        tokenStorePath: path,
        redactor,
      });
      log(`token for ${token.resource} from ${token.authorizationServer} saved in ${path} (readable by you only)`);
      if (values['print-token'] === true) output.stdout(`${token.accessToken}\n`);
      return 0;
    } catch (error) {
      log(`login failed: ${error instanceof Error ? error.message : String(error)}`);
      return error instanceof LoginError ? error.exitCode : 1;
    }
  });
}
