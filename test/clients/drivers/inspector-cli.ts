import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { clientEnvironment, packageBin, packageVersion, type ClientDriver } from '../context.js';
import { fail, pass } from '../matrix.js';
import { run } from '../processes.js';
import { perUserGrant } from './consent.js';

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
 * add, then multiply; then add on the introspection route and list_notes on the per-user grant route. Its OAuth state is kept in its own HOME between calls (`MCP_INSPECTOR_SECRET_STORE=file`),
 * so only the first call authorizes. It opens the authorization URL with the scripted browser
 * (`MCP_AUTO_OPEN_ENABLED=true` stands in for a terminal) and would confirm a step-up from stdin.
 */
export const inspectorCli: ClientDriver = {
  client: 'MCP Inspector CLI (--cli)',
  version: () => packageVersion(PACKAGE),
  timeoutMs: 6 * CALL_TIMEOUT_MS,
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
    const introspected = resultText((await call('opaque-add', ['--method', 'tools/call', '--tool-name', 'add', '--tool-arg', 'a=2', 'b=3'], context.opaqueUrl)).stdout);
    let attempt = 0;
    const listNotes = async () => {
      attempt += 1;
      const answer = await call(`notes-${attempt}`, ['--method', 'tools/call', '--tool-name', 'list_notes'], context.notesUrl);
      const text = resultText(answer.stdout);
      // What the person sees when the call fails: the CLI's output.
      if (answer.code !== 0 || text === undefined) throw new Error(answer.output);
      return text;
    };
    return {
      results: { added: resultText(add.stdout) === '5', multiplied: resultText(multiply.stdout) === '42' },
      routes: {
        introspection: introspected === '5' ? pass() : fail(`add answered "${(introspected ?? '').slice(0, 120)}"`),
        'user-grant': await perUserGrant(context.notesUrl, listNotes),
      },
    };
  },
};
