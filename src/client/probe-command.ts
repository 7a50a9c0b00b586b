import { bearerTokenProblem } from './bearer-token.js';
import { hasFailure } from './check.js';
import { parseCommandLine, parseHttpUrl, parseTimeout, readSecretFile, UsageError, withUsageErrors, type CommandOutput, type ExitCode } from './command-line.js';
import { probe } from './probe.js';
import { Redactor } from './redaction.js';
import { allTokens, readTokenStore, tokenStorePath } from './token-store.js';
import { renderJson, renderTable } from './report.js';

export const PROBE_USAGE = 'mcp-auth-gateway probe <url> [--token T | --token-file F] [--client-id ID] [--allow-private] [--json] [--timeout 10s]';

const OPTIONS = {
  token: { type: 'string' },
  'token-file': { type: 'string' },
  'client-id': { type: 'string' },
  'allow-private': { type: 'boolean' },
  json: { type: 'boolean' },
  timeout: { type: 'string' },
} as const;

const DEFAULT_TIMEOUT_MS = 10_000;

/** `--token` or `--token-file`'s content, refused (without being quoted) unless it can go in a Bearer header. */
async function tokenOf(token: string | undefined, tokenFile: string | undefined): Promise<string | undefined> {
  if (token !== undefined && tokenFile !== undefined) throw new UsageError('give --token or --token-file, not both');
  const value = tokenFile === undefined ? token : await readSecretFile(tokenFile, '--token-file');
  const problem = value === undefined ? undefined : bearerTokenProblem(value);
  if (problem !== undefined) throw new UsageError(`${tokenFile === undefined ? '--token' : `--token-file ${tokenFile}`}: not a bearer token: ${problem}`);
  return value;
}

/** The DPoP key `login` stored with this very token, if it did: a bound token is then sent with a proof. */
async function storedDpopKey(token: string | undefined, env: NodeJS.ProcessEnv) {
  if (token === undefined) return undefined;
  return allTokens(await readTokenStore(tokenStorePath(env))).find((stored) => stored.accessToken === token)?.dpopKey;
}

/**
 * `mcp-auth-gateway probe <args>`: exit 0 when no check failed (warnings allowed), 1 when one did, 2 for a usage
 * error or an unreachable URL. `env` locates the token store (a DPoP-bound token's key).
 */
export function runProbeCommand(args: readonly string[], output: CommandOutput, env: NodeJS.ProcessEnv = process.env): Promise<ExitCode> {
  return withUsageErrors(output, PROBE_USAGE, async () => {
    const { values, positionals } = parseCommandLine(args, OPTIONS);
    const url = parseHttpUrl(positionals[0], 'the MCP server URL');
    const timeoutMs = parseTimeout(values.timeout, DEFAULT_TIMEOUT_MS);
    const token = await tokenOf(values.token, values['token-file']);
    const redactor = new Redactor();
    redactor.add(token);
    const dpopKey = await storedDpopKey(token, env);
    const result = await probe({ url, token, dpopKey, clientId: values['client-id'], allowPrivate: values['allow-private'] === true, timeoutMs });
    if (!result.reachable) {
      output.stderr(`cannot reach ${result.url}: ${redactor.apply(result.reason)}\n`);
      return 2;
    }
    output.stdout(values.json === true ? renderJson(result, redactor) : renderTable(result, redactor));
    return hasFailure(result.checks) ? 1 : 0;
  });
}
