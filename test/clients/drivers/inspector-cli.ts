import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { clientEnvironment, packageBin, packageVersion, type ClientDriver } from '../context.js';
import { run } from '../processes.js';
import { otherRouteKinds } from './route-kinds.js';

const PACKAGE = '@modelcontextprotocol/inspector';
const CALL_TIMEOUT_MS = 45_000;

/** The text of a `--format json` tools/call result, or undefined. */
function resultText(stdout: string): string | undefined {
  try {
    const parsed = JSON.parse(stdout.trim()) as { result?: { content?: { type?: string; text?: string }[] } };
    return parsed.result?.content?.find((item) => item.type === 'text')?.text;
  } catch {
    return undefined;
  }
}

/**
 * `npx @modelcontextprotocol/inspector --cli`, one process per call as a user types them: tools/list, then
 * add, then multiply; then the other route kinds (one server entry per URL in its store, as a user adds them). Its OAuth state is kept in its own HOME between calls (`MCP_INSPECTOR_SECRET_STORE=file`),
 * so only the first call authorizes. It opens the authorization URL with the scripted browser
 * (`MCP_AUTO_OPEN_ENABLED=true` stands in for a terminal) and would confirm a step-up from stdin.
 */
export const inspectorCli: ClientDriver = {
  client: 'MCP Inspector CLI (--cli)',
  version: () => packageVersion(PACKAGE),
  timeoutMs: 7 * CALL_TIMEOUT_MS,
  async run(context) {
    const directory = join(context.runDir, 'inspector-cli');
    await mkdir(directory, { recursive: true });
    const env = await clientEnvironment(directory, { MCP_AUTO_OPEN_ENABLED: 'true', MCP_INSPECTOR_SECRET_STORE: 'file' });
    const call = async (name: string, args: readonly string[], url = context.calcUrl) =>
      run(
        process.execPath,
        [
          packageBin(PACKAGE, 'inspector'),
          '--cli',
          url.href,
          ...args,
          '--format',
          'json',
          '--callback-url',
          'http://127.0.0.1:0/oauth/callback',
        ],
        { env, cwd: directory, logFile: join(directory, `${name}.log`), stdin: 'y\n', timeoutMs: CALL_TIMEOUT_MS },
      );
    const list = await call('tools-list', ['--method', 'tools/list']);
    if (list.code !== 0) throw new Error(`tools/list exited ${String(list.code)}`);
    const add = await call('add', ['--method', 'tools/call', '--tool-name', 'add', '--tool-arg', 'a=2', 'b=3']);
    const multiply = await call('multiply', ['--method', 'tools/call', '--tool-name', 'multiply', '--tool-arg', 'x=6', 'y=7']);
    let calls = 0;
    const routes = await otherRouteKinds(context, async (url, tool, args, session) => {
      calls += 1;
      const toolArgs = Object.entries(args).map(([name, value]) => `${name}=${value}`);
      const answer = await call(`${session}-${calls}`, ['--method', 'tools/call', '--tool-name', tool, ...(toolArgs.length === 0 ? [] : ['--tool-arg', ...toolArgs])], url);
      const text = resultText(answer.stdout);
      // What the person sees when the call fails: the CLI's output.
      if (answer.code !== 0 || text === undefined) throw new Error(answer.output);
      return text;
    });
    return { results: { added: resultText(add.stdout) === '5', multiplied: resultText(multiply.stdout) === '42' }, routes };
  },
};
