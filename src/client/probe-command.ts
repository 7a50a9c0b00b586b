import { hasFailure } from './check.js';
import { parseHttpUrl, parseTimeout, readSecretFile, UsageError, withUsageErrors, type CommandOutput, type ExitCode } from './command-line.js';
import { probe } from './probe.js';
import { Redactor } from './redaction.js';
import { renderJson, renderTable } from './report.js';

export const PROBE_USAGE = 'mcp-auth-gateway probe <url> [--token T | --token-file F] [--client-id ID] [--json] [--timeout 10s]';

export interface ProbeCommandOptions {
  readonly url?: string;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly clientId?: string;
  readonly json?: boolean;
  readonly timeout?: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;

async function tokenOf(options: ProbeCommandOptions): Promise<string | undefined> {
  if (options.token !== undefined && options.tokenFile !== undefined) throw new UsageError('give --token or --token-file, not both');
  return options.tokenFile === undefined ? options.token : readSecretFile(options.tokenFile, '--token-file');
}

/** `mcp-auth-gateway probe`: exit 0 when no check failed (warnings allowed), 1 when one did, 2 usage or unreachable. */
export function runProbeCommand(options: ProbeCommandOptions, output: CommandOutput): Promise<ExitCode> {
  return withUsageErrors(output, PROBE_USAGE, async () => {
    const url = parseHttpUrl(options.url, 'the MCP server URL');
    const timeoutMs = parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS);
    const token = await tokenOf(options);
    const redactor = new Redactor();
    redactor.add(token);
    const result = await probe({ url, token, clientId: options.clientId, timeoutMs });
    if (!result.reachable) {
      output.stderr(redactor.apply(`cannot reach ${result.url}: ${result.reason}\n`));
      return 2;
    }
    output.stdout(redactor.apply(options.json === true ? renderJson(result) : renderTable(result)));
    return hasFailure(result.checks) ? 1 : 0;
  });
}
